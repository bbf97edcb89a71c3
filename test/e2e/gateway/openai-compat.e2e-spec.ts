import OpenAI from 'openai';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/**
 * What OpenAI clients switch on: the error `code` and `type` OpenAI itself sends, a bad runtime answer told
 * apart from an unreachable runtime, and content parts whose data URLs fit the part.
 */

async function userKey(gateway: GatewayUnderTest, email: string): Promise<string> {
  const created = await gateway.call<{ id: string }>('POST', '/admin/api/users', { email, tier: 'sub' });
  const issued = await gateway.call<{ key: string }>('POST', `/admin/api/users/${created.body.id}/keys`, {
    name: 'compat',
  });
  return issued.body.key;
}

async function errorOf(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected an API error');
}

describe.each(backends())('gateway OpenAI compatibility ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let key: string;

  beforeAll(async () => {
    gateway = await startGateway(backend, { settings: { rate_limits: { payg: 1000, sub: 1000 } } });
    key = await userKey(gateway, 'compat@example.com');
  });

  afterAll(async () => {
    await gateway?.close();
  });

  describe('error codes', () => {
    it('answers a request without a key with code invalid_api_key, as OpenAI does', async () => {
      const response = await fetch(`${gateway.baseUrl}/v1/models`);
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: { type: string; code: string } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    });

    it('answers a wrong key with code invalid_api_key through the SDK', async () => {
      const error = await errorOf(gateway.openai('sk-tb-wrong').models.list());
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error.code).toBe('invalid_api_key');
      expect(error.type).toBe('invalid_request_error');
    });

    it('answers an unknown model with model_not_found of type invalid_request_error', async () => {
      const error = await errorOf(
        gateway
          .openai(key)
          .chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe('model_not_found');
      expect(error.type).toBe('invalid_request_error');
    });

    it('answers a request past the tier limit with 429 rate_limit_exceeded', async () => {
      await gateway.call('PATCH', '/admin/api/config', { rate_limits: { payg: 1000, sub: 1 } });
      try {
        const limited = await userKey(gateway, 'limited@example.com');
        const client = gateway.openai(limited);
        await client.embeddings.create({ model: 'nomic-embed-text', input: 'one' });
        const error = await errorOf(client.embeddings.create({ model: 'nomic-embed-text', input: 'two' }));
        expect(error).toBeInstanceOf(OpenAI.RateLimitError);
        expect(error.code).toBe('rate_limit_exceeded');
        expect(error.type).toBe('requests');
      } finally {
        await gateway.call('PATCH', '/admin/api/config', { rate_limits: { payg: 1000, sub: 1000 } });
      }
    });
  });

  describe('runtime failures', () => {
    it('answers a runtime HTTP 500 with 502 (a bad upstream answer), not 503', async () => {
      gateway.ollama.failures.push({ status: 500, error: 'llama runner process has terminated' });
      const error = await errorOf(
        gateway.openai(key).chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(error.status).toBe(502);
      expect(error.type).toBe('server_error');
      expect(error.message).toContain('llama runner process has terminated');
    });

    it('answers a runtime answer that is not JSON with 502', async () => {
      gateway.ollama.failures.push({ status: 200, body: '<html>proxy error</html>' });
      const error = await errorOf(gateway.openai(key).embeddings.create({ model: 'nomic-embed-text', input: 'hi' }));
      expect(error.status).toBe(502);
      expect(error.message).toMatch(/model runtime/i);
    });
  });

  describe('content parts', () => {
    it('refuses an audio data URL in an image_url part with 400 naming the part, sending nothing to the model', async () => {
      const before = gateway.ollama.requests.filter((request) => request.path === '/api/chat').length;
      const error = await errorOf(
        gateway.openai(key).chat.completions.create({
          model: 'llava',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this?' },
                { type: 'image_url', image_url: { url: 'data:audio/wav;base64,UklGRiQAAABXQVZFZm10IA==' } },
              ],
            },
          ],
        }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe('messages[0].content[1].image_url.url');
      expect(error.message).toContain('audio/wav');
      expect(gateway.ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(before);
    });
  });
});
