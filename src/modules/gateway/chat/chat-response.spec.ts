import { ChunkTranslator, finishReasonOf, toChatCompletion } from './chat-response.js';

const record = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'm',
  created_at: '2026-01-01T00:00:00Z',
  message: { role: 'assistant' as const, content },
  done: false,
  ...extra,
});
const done = { ...record('', { done: true, done_reason: 'stop', prompt_eval_count: 7, eval_count: 2 }) };

describe('toChatCompletion', () => {
  it('builds the OpenAI completion with the runtime counts', () => {
    const completion = toChatCompletion({ ...done, message: { role: 'assistant', content: 'Hi!' } }, 'llama', 100);
    expect(completion).toMatchObject({
      object: 'chat.completion',
      created: 100,
      model: 'llama',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi!', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
    expect(completion.choices[0].message).not.toHaveProperty('tool_calls');
  });

  it('turns native tool calls into JSON-string arguments with ids, content null', () => {
    const completion = toChatCompletion(
      {
        ...done,
        message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { x: [1] } } }] },
      },
      'llama',
      1,
    );
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"x":[1]}' } }] },
    });
    expect(completion.choices[0].message.tool_calls?.[0].id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it('treats a missing prompt count (cached prompt) as 0', () => {
    expect(toChatCompletion({ ...done, prompt_eval_count: undefined }, 'm', 1).usage.prompt_tokens).toBe(0);
  });
});

describe('finishReasonOf', () => {
  it('maps length, and tool calls over anything', () => {
    expect(finishReasonOf('length', false)).toBe('length');
    expect(finishReasonOf('stop', false)).toBe('stop');
    expect(finishReasonOf(undefined, false)).toBe('stop');
    expect(finishReasonOf('length', true)).toBe('tool_calls');
  });
});

describe('ChunkTranslator', () => {
  it('sends the role once, content deltas, the finish chunk and a usage chunk with usage null before it', () => {
    const translator = new ChunkTranslator('m', 5, true);
    const chunks = [
      ...translator.translate(record('Hel')),
      ...translator.translate(record('lo')),
      ...translator.translate(done),
    ];
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: 'Hel' },
      { content: 'lo' },
      {},
      undefined,
    ]);
    expect(chunks[2].choices[0].finish_reason).toBe('stop');
    expect(chunks.slice(0, 3).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks[3]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([translator.id]));
    expect(translator.generatedRecords).toBe(2);
  });

  it('leaves usage out entirely without include_usage', () => {
    const translator = new ChunkTranslator('m', 5, false);
    const chunks = [...translator.translate(record('a')), ...translator.translate(done)];
    expect(chunks).toHaveLength(2);
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
    expect(translator.usage?.total_tokens).toBe(9);
  });

  it('numbers streamed tool calls and finishes with tool_calls', () => {
    const translator = new ChunkTranslator('m', 5, false);
    const calls = record('', {
      message: {
        role: 'assistant',
        content: '',
        tool_calls: [{ function: { name: 'a', arguments: {} } }, { function: { name: 'b', arguments: { q: 1 } } }],
      },
    });
    const chunks = [...translator.translate(calls), ...translator.translate(done)];
    expect(chunks[0].choices[0].delta).toMatchObject({
      role: 'assistant',
      tool_calls: [{ index: 0, function: { name: 'a', arguments: '{}' } }],
    });
    expect(chunks[1].choices[0].delta).toMatchObject({
      tool_calls: [{ index: 1, function: { name: 'b', arguments: '{"q":1}' } }],
    });
    expect(chunks[1].choices[0].delta).not.toHaveProperty('role');
    expect(chunks[2].choices[0].finish_reason).toBe('tool_calls');
  });

  it('still sends the role when the answer is empty', () => {
    const chunks = new ChunkTranslator('m', 5, false).translate(done);
    expect(chunks.map((chunk) => chunk.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }, {}]);
  });
});
