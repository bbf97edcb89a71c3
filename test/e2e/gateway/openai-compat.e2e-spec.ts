import OpenAI from 'openai';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** What OpenAI clients rely on: content parts whose data URLs fit the part. */

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
