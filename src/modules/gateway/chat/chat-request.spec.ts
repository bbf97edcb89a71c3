import { PlatformError } from '../../../common/errors.js';
import { chatNeed, decodeDataUrl, parseChatRequest, toOllamaChat } from './chat-request.js';

const user = (content: unknown) => ({ role: 'user', content });
const noImages = () => Promise.reject(new Error('no image expected'));

function paramOf(call: () => unknown): string | undefined {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).status).toBe(400);
    return (error as PlatformError).fieldErrors?.[0]?.field;
  }
  throw new Error('expected a PlatformError');
}

describe('parseChatRequest', () => {
  it('refuses a data URL whose media type does not fit its part, naming the part', () => {
    const part = (url: string) => ({ model: 'm', messages: [user([{ type: 'image_url', image_url: { url } }])] });
    for (const url of ['data:audio/wav;base64,UklGRg==', 'data:text/plain,hello', 'data:;base64,AAAA', 'data:,x']) {
      expect(paramOf(() => parseChatRequest(part(url)))).toBe('messages[0].content[0].image_url.url');
    }
    expect(() => parseChatRequest(part('data:audio/wav;base64,UklGRg=='))).toThrow(/audio\/wav.*image/);
    expect(parseChatRequest(part('data:IMAGE/PNG;base64,iVBORw==')).messages[0].content).toHaveLength(1);
  });

  it('maps the sampling parameters to native options, max_completion_tokens over max_tokens', () => {
    const request = parseChatRequest({
      model: ' llama3.2 ',
      messages: [user('hi')],
      temperature: 0.2,
      top_p: 0.5,
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: 'END',
      seed: 7,
      presence_penalty: 1,
      frequency_penalty: -1,
      user: 'ignored',
      logprobs: false,
    });
    expect(request.model).toBe('llama3.2');
    expect(request.options).toEqual({
      temperature: 0.2,
      top_p: 0.5,
      num_predict: 20,
      stop: ['END'],
      seed: 7,
      presence_penalty: 1,
      frequency_penalty: -1,
    });
    expect(request.stream).toBe(false);
  });

  it('takes include_usage only for streams', () => {
    expect(
      parseChatRequest({ model: 'm', messages: [user('x')], stream: true, stream_options: { include_usage: true } })
        .includeUsage,
    ).toBe(true);
    expect(
      parseChatRequest({ model: 'm', messages: [user('x')], stream_options: { include_usage: true } }).includeUsage,
    ).toBe(false);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ messages: [user('x')] }, 'model'],
    [{ model: 'm', messages: [] }, 'messages'],
    [{ model: 'm', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    [{ model: 'm', messages: [user(null)] }, 'messages[0].content'],
    [{ model: 'm', messages: [user([{ type: 'video', video: {} }])] }, 'messages[0].content[0].type'],
    [
      { model: 'm', messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'ogg' } }])] },
      'messages[0].content[0].input_audio.format',
    ],
    [{ model: 'm', messages: [user('x')], n: 2 }, 'n'],
    [{ model: 'm', messages: [user('x')], temperature: 3 }, 'temperature'],
    [{ model: 'm', messages: [user('x')], max_tokens: 0 }, 'max_tokens'],
    [{ model: 'm', messages: [user('x')], stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ model: 'm', messages: [user('x')], response_format: { type: 'xml' } }, 'response_format.type'],
    [
      { model: 'm', messages: [user('x')], response_format: { type: 'json_schema', json_schema: {} } },
      'response_format.json_schema.schema',
    ],
    [{ model: 'm', messages: [user('x')], tools: [{ type: 'function' }] }, 'tools[0]'],
    [{ model: 'm', messages: [user('x')], tool_choice: 'sometimes' }, 'tool_choice'],
    [{ model: 'm', messages: [user('x')], stream: 'yes' }, 'stream'],
  ])('rejects %j naming %s', (body, param) => {
    expect(paramOf(() => parseChatRequest(body))).toBe(param);
  });
});

describe('chatNeed', () => {
  it('needs vision for an image, audio for audio (audio wins), chat otherwise', () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } };
    const audio = { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } };
    expect(chatNeed(parseChatRequest({ model: 'm', messages: [user('x')] }))).toBe('chat');
    expect(chatNeed(parseChatRequest({ model: 'm', messages: [user([image])] }))).toBe('vision');
    expect(chatNeed(parseChatRequest({ model: 'm', messages: [user([image]), user([audio])] }))).toBe('audio');
  });
});

describe('decodeDataUrl', () => {
  it('returns the base64 payload, and encodes a plain data URL', () => {
    expect(decodeDataUrl('data:image/png;base64,iVBO Rw0K')).toBe('iVBORw0K');
    expect(decodeDataUrl('data:text/plain,hi%20there')).toBe(Buffer.from('hi there').toString('base64'));
  });

  it('rejects a malformed data URL', () => {
    expect(() => decodeDataUrl('data:image/png;base64,***')).toThrow('invalid base64');
    expect(() => decodeDataUrl('nope')).toThrow('not a valid data URL');
  });
});

describe('toOllamaChat', () => {
  it('turns parts into content and images, developer into system, tool calls into objects', async () => {
    const request = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'developer', content: 'rules' },
        user([
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'closely' },
        ]),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    const native = await toOllamaChat(request, 'chosen', async (url) => Buffer.from(url).toString('base64'));
    expect(native).toEqual({
      model: 'chosen',
      stream: true,
      format: 'json',
      tools: [{ type: 'function', function: { name: 'f' } }],
      messages: [
        { role: 'system', content: 'rules' },
        {
          role: 'user',
          content: 'look\nclosely',
          images: [Buffer.from('https://example.com/a.png').toString('base64')],
        },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] },
        { role: 'tool', content: 'done', tool_name: 'f' },
      ],
    });
  });

  it('refuses mp3 audio (the runtime reads WAV only) and broken tool arguments', async () => {
    const mp3 = parseChatRequest({
      model: 'm',
      messages: [user([{ type: 'input_audio', input_audio: { data: 'AA==', format: 'mp3' } }])],
    });
    await expect(toOllamaChat(mp3, 'm', noImages)).rejects.toThrow('WAV audio only');
    const broken = parseChatRequest({
      model: 'm',
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{' } }],
        },
      ],
    });
    await expect(toOllamaChat(broken, 'm', noImages)).rejects.toThrow('must be a JSON string');
  });
});
