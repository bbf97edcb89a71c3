import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** The gateway's acceptance test: the official `openai` SDK (6.x) against the gateway, over a fake Ollama. */

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(32)]);

const WEATHER_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

async function startImageServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === '/cat.png') {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      response.end(PNG);
    } else if (request.url === '/huge.png') {
      // No content-length: the cap must cut the streamed body.
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end(Buffer.alloc(4096, 1));
    } else if (request.url === '/page.html') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html></html>');
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each(backends())('gateway OpenAI API with the openai SDK ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let client: OpenAI;
  let images: { url: string; server: Server };

  beforeAll(async () => {
    gateway = await startGateway(backend, {
      settings: { fallback_models: { chat: null, vision: 'llava', audio: null, embedding: null } },
      // The test image server is on loopback, which the gateway refuses unless told otherwise.
      env: { GATEWAY_IMAGE_MAX_BYTES: '1024', GATEWAY_IMAGE_ALLOW_PRIVATE: 'true' },
    });
    client = gateway.openai();
    images = await startImageServer();
  });

  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => images?.server.close(resolve));
  });

  describe('chat completions', () => {
    it('answers a chat in OpenAI shape with the exact token counts of the runtime', async () => {
      const completion = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'hello there' },
        ],
      });
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.object).toBe('chat.completion');
      expect(completion.model).toBe('llama3.2');
      expect(completion.choices).toHaveLength(1);
      expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Echo: hello there' });
      expect(completion.choices[0].finish_reason).toBe('stop');
      // 4 prompt words; "Echo:", " hello", " there" are 3 records.
      expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    });

    it('passes the sampling parameters to the runtime as native options', async () => {
      await client.chat.completions.create({
        model: 'llama3.2',
        messages: [
          { role: 'developer', content: 'x' },
          { role: 'user', content: 'hi' },
        ],
        temperature: 0.3,
        top_p: 0.9,
        max_completion_tokens: 50,
        stop: ['END'],
        seed: 42,
      });
      const native = gateway.ollama.lastRequest('/api/chat') as Record<string, unknown>;
      expect(native).toMatchObject({
        model: 'llama3.2',
        stream: false,
        options: { temperature: 0.3, top_p: 0.9, num_predict: 50, stop: ['END'], seed: 42 },
        messages: [
          { role: 'system', content: 'x' },
          { role: 'user', content: 'hi' },
        ],
      });
    });

    it('reports finish_reason length when max_tokens cuts the answer', async () => {
      const completion = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'one two three four five' }],
        max_tokens: 2,
      });
      expect(completion.choices[0].finish_reason).toBe('length');
      expect(completion.usage?.completion_tokens).toBe(2);
    });

    it('rejects n other than 1 with a 400 naming the parameter', async () => {
      const error = await client.chat.completions
        .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], n: 2 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
      expect((error as Error).message).toContain("'n' must be 1");
    });

    it('answers 404 for a model the runtime does not have, never another model', async () => {
      const error = await client.chat.completions
        .create({ model: 'llama9', messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as Error).message).toContain("The model 'llama9' does not exist");
    });

    it('forwards response_format json_object and json_schema as the native format', async () => {
      const completion = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'give json' }],
        response_format: { type: 'json_object' },
      });
      expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual({ answer: 'give json' });
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({ format: 'json' });
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
      await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'give json' }],
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      });
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({ format: schema });
    });
  });

  describe('streaming', () => {
    it('streams chunks, then one usage chunk with exact counts, then [DONE]', async () => {
      const stream = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'stream me please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('Echo: stream me please');
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
      const last = chunks[chunks.length - 1];
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
      expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');
    });

    it('sends no usage chunk without include_usage and ends the raw stream with data: [DONE]', async () => {
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events = (await response.text()).split('\n\n').filter(Boolean);
      expect(events[events.length - 1]).toBe('data: [DONE]');
      expect(events.filter((event) => event === 'data: [DONE]')).toHaveLength(1);
      const chunks = events
        .slice(0, -1)
        .map((event) => JSON.parse(event.replace(/^data: /, '')) as Record<string, unknown>);
      expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    });

    it('turns a mid-stream runtime failure into an error event the SDK raises', async () => {
      const stream = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'FAIL_MIDSTREAM now' }],
        stream: true,
      });
      const seen: string[] = [];
      const error = await (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })().catch((caught: unknown) => caught);
      expect(seen.join('')).toBe('Echo:');
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as Error).message).toContain('model runner has unexpectedly stopped');
    });

    it('stops the upstream generation when the client goes away', async () => {
      gateway.ollama.tokenDelayMs = 30;
      gateway.ollama.abortedAfterRecords = null;
      try {
        const controller = new AbortController();
        const stream = await client.chat.completions.create(
          {
            model: 'llama3.2',
            messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' }],
            stream: true,
          },
          { signal: controller.signal },
        );
        let received = 0;
        await (async () => {
          for await (const _chunk of stream) {
            received += 1;
            if (received === 2) controller.abort();
          }
        })().catch(() => undefined);
        const deadline = Date.now() + 5000;
        while (gateway.ollama.abortedAfterRecords === null && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(gateway.ollama.abortedAfterRecords).not.toBeNull();
        expect(gateway.ollama.abortedAfterRecords).toBeLessThan(27);
      } finally {
        gateway.ollama.tokenDelayMs = 0;
      }
    });
  });

  describe('tools', () => {
    it('returns tool_calls with JSON-string arguments and finish_reason tool_calls', async () => {
      const completion = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'What is the weather in Berlin?' }],
        tools: [WEATHER_TOOL],
        tool_choice: 'auto',
      });
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      const call = choice.message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
      expect(call.id).toMatch(/^call_/);
      expect(call.type).toBe('function');
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Berlin' });
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({ tools: [WEATHER_TOOL] });
    });

    it('streams tool-call deltas the SDK assembles into the final message', async () => {
      const runner = client.chat.completions.stream({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'weather in Oslo?' }],
        tools: [WEATHER_TOOL],
      });
      const final = await runner.finalChatCompletion();
      const call = final.choices[0].message
        .tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });
    });

    it('sends the tool result back with object arguments and the function name', async () => {
      await client.chat.completions.create({
        model: 'llama3.2',
        messages: [
          { role: 'user', content: 'weather in Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '21 C, sunny' },
        ],
        tools: [WEATHER_TOOL],
      });
      const native = gateway.ollama.lastRequest('/api/chat') as { messages: unknown[] };
      expect(native.messages[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Rome' } } }],
      });
      expect(native.messages[2]).toEqual({ role: 'tool', content: '21 C, sunny', tool_name: 'get_weather' });
    });

    it('leaves the tools out when tool_choice is none', async () => {
      await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [WEATHER_TOOL],
        tool_choice: 'none',
      });
      expect(gateway.ollama.lastRequest('/api/chat')).not.toHaveProperty('tools');
    });
  });

  describe('vision and audio routing', () => {
    const imagePart = (url: string): OpenAI.Chat.Completions.ChatCompletionContentPart => ({
      type: 'image_url',
      image_url: { url },
    });

    it('sends data-URL images to a vision model as native base64 images', async () => {
      const completion = await client.chat.completions.create({
        model: 'llava',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              imagePart(`data:image/png;base64,${PNG.toString('base64')}`),
            ],
          },
        ],
      });
      expect(completion.choices[0].message.content).toBe('I see 1 image(s)');
      expect(completion.usage?.prompt_tokens).toBe(103);
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
        model: 'llava',
        messages: [{ role: 'user', content: 'what is this?', images: [PNG.toString('base64')] }],
      });
    });

    it('fetches http(s) image URLs itself and sends their bytes', async () => {
      await client.chat.completions.create({
        model: 'llava',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'and this?' }, imagePart(`${images.url}/cat.png`)] },
        ],
      });
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
        messages: [{ images: [PNG.toString('base64')] }],
      });
    });

    it('refuses images over the size cap, non-images and unreachable URLs with a 400', async () => {
      for (const [path, message] of [
        ['/huge.png', 'is larger than 1024 bytes'],
        ['/page.html', 'is not an image'],
        ['/missing.png', 'answered HTTP 404'],
      ]) {
        const error = await client.chat.completions
          .create({ model: 'llava', messages: [{ role: 'user', content: [imagePart(`${images.url}${path}`)] }] })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as Error).message).toContain(message);
      }
    });

    it('routes an image sent to a text model to the configured vision fallback, and says so', async () => {
      const response = await client.chat.completions
        .create({
          model: 'llama3.2',
          messages: [{ role: 'user', content: [imagePart(`data:image/png;base64,${PNG.toString('base64')}`)] }],
        })
        .withResponse();
      expect(response.data.model).toBe('llava');
      expect(response.response.headers.get('x-gateway-routed-from')).toBe('llama3.2');
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({ model: 'llava' });
    });

    it('uses name rules for a runtime that reports no capabilities', async () => {
      const completion = await client.chat.completions.create({
        model: 'hf.co/acme/tiny-vision-vl:Q4_K_M',
        messages: [{ role: 'user', content: [imagePart(`data:image/png;base64,${PNG.toString('base64')}`)] }],
      });
      expect(completion.model).toBe('hf.co/acme/tiny-vision-vl:Q4_K_M');
    });

    it('sends input_audio to an omni model (WAV bytes in the native images)', async () => {
      await client.chat.completions.create({
        model: 'gemma3n:e4b',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'transcribe' },
              { type: 'input_audio', input_audio: { data: WAV.toString('base64'), format: 'wav' } },
            ],
          },
        ],
      });
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
        model: 'gemma3n:e4b',
        messages: [{ content: 'transcribe', images: [WAV.toString('base64')] }],
      });
    });

    it('refuses audio for a text model without an audio fallback, naming what is missing', async () => {
      const error = await client.chat.completions
        .create({
          model: 'llama3.2',
          messages: [
            {
              role: 'user',
              content: [{ type: 'input_audio', input_audio: { data: WAV.toString('base64'), format: 'wav' } }],
            },
          ],
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toContain("The model 'llama3.2' is a text model and cannot take audio input");
      expect((error as Error).message).toContain('fallback_models.audio');
    });
  });

  describe('embeddings', () => {
    it('embeds an array of strings with usage', async () => {
      const result = await client.embeddings.create({
        model: 'nomic-embed-text',
        input: ['first text', 'second longer text'],
        encoding_format: 'float',
      });
      expect(result.object).toBe('list');
      expect(result.data).toHaveLength(2);
      expect(result.data[1]).toMatchObject({ object: 'embedding', index: 1 });
      expect(result.data[0].embedding).toHaveLength(8);
      expect(result.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    });

    it('returns base64 float32 vectors that decode to the float ones', async () => {
      const floats = await client.embeddings.create({
        model: 'nomic-embed-text',
        input: 'same',
        encoding_format: 'float',
      });
      // The SDK asks for base64 by default and decodes it into numbers.
      const decoded = await client.embeddings.create({ model: 'nomic-embed-text', input: 'same' });
      expect(decoded.data[0].embedding).toHaveLength(8);
      decoded.data[0].embedding.forEach((value, index) =>
        expect(value).toBeCloseTo(floats.data[0].embedding[index], 6),
      );
    });

    it('refuses a chat model for embeddings with a 400', async () => {
      const error = await client.embeddings
        .create({ model: 'llama3.2', input: 'x' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toContain('cannot take embeddings');
    });
  });

  describe('models', () => {
    it('lists the installed models with their types', async () => {
      const models = [];
      for await (const model of client.models.list()) models.push(model);
      expect(models.map((model) => model.id)).toEqual([
        'gemma3n:e4b',
        'hf.co/acme/tiny-vision-vl:Q4_K_M',
        'llama3.2:latest',
        'llava:latest',
        'nomic-embed-text:latest',
      ]);
      expect(models.find((model) => model.id === 'gemma3n:e4b')).toMatchObject({
        object: 'model',
        owned_by: 'library',
        type: 'omni',
        created: Date.parse('2026-01-02T03:04:05.000Z') / 1000,
      });
    });

    it('retrieves one model, also by a name with slashes, and 404s an unknown one', async () => {
      expect(await client.models.retrieve('hf.co/acme/tiny-vision-vl:Q4_K_M')).toMatchObject({
        id: 'hf.co/acme/tiny-vision-vl:Q4_K_M',
        owned_by: 'acme',
        type: 'vision',
      });
      expect((await client.models.retrieve('llama3.2')).id).toBe('llama3.2:latest');
      await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });
  });

  describe('authentication', () => {
    it('refuses a wrong key with the OpenAI 401 body', async () => {
      const error = await gateway
        .openai('sk-tb-wrong')
        .models.list()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((error as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    });

    it('refuses a request without a key', async () => {
      const response = await fetch(`${gateway.baseUrl}/v1/models`);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    });
  });
});

describe('gateway image fetching by default', () => {
  it('refuses image URLs that reach loopback or private addresses (SSRF)', async () => {
    const [backend] = backends();
    const gateway = await startGateway(backend);
    const images = await startImageServer();
    try {
      for (const url of [`${images.url}/cat.png`, 'http://169.254.169.254/latest/meta-data', 'http://[::1]:9/x.png']) {
        const error = await gateway
          .openai()
          .chat.completions.create({
            model: 'llava',
            messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
          })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as Error).message).toContain('resolves to a private address');
      }
    } finally {
      await gateway.close();
      await new Promise((resolve) => images.server.close(resolve));
    }
  });
});

describe('gateway without a reachable runtime', () => {
  it('answers 503 naming the runtime, not a stack', async () => {
    const [backend] = backends();
    const gateway = await startGateway(backend);
    try {
      await gateway.ollama.stop();
      const error = await gateway
        .openai()
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((error as Error).message).toContain('cannot be reached');
    } finally {
      await gateway.close();
    }
  });
});
