import OpenAI from 'openai';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { type GatewayUnderTest, parallelChats, startGateway } from '../../support/gateway-under-test.js';

/** Users, keys, usage, PAYG balances, per-tier limits, through the admin API and the openai SDK. */

interface User {
  id: string;
  email: string;
  tier: string;
  balance: number;
  active: boolean;
}
interface IssuedKey {
  id: string;
  key: string;
  key_prefix: string;
}
interface Usage {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  by_model: Array<{ model: string; requests: number }>;
  by_day: Array<{ date: string; requests: number }>;
}

let emailCounter = 0;

async function userWithKey(
  gateway: GatewayUnderTest,
  input: { tier?: string; balance?: number } = {},
): Promise<{ user: User; key: string; keyId: string }> {
  emailCounter += 1;
  const created = await gateway.call<User>('POST', '/admin/api/users', {
    email: `u${emailCounter}@example.com`,
    ...input,
  });
  expect(created.status).toBe(201);
  const issued = await gateway.call<IssuedKey>('POST', `/admin/api/users/${created.body.id}/keys`, { name: 'test' });
  expect(issued.status).toBe(201);
  return { user: created.body, key: issued.body.key, keyId: issued.body.id };
}

const balanceOf = async (gateway: GatewayUnderTest, key: string) =>
  (await gateway.call<User>('GET', '/user/api/me', undefined, key)).body.balance;

describe.each(backends())('gateway accounts, balances and limits ($name)', (backend) => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGateway(backend, {
      // 1 per 1K prompt tokens, 2 per 1K completion tokens: a call of 4 + 3 tokens costs 0.004 + 0.006.
      settings: {
        prices: { input_per_1k: 1, output_per_1k: 2 },
        model_prices: {
          'nomic-embed-text': { input_per_1k: 10, output_per_1k: 0 },
          'gemma3n:e4b': { input_per_1k: 0, output_per_1k: 2 },
        },
        rate_limits: { payg: 1000, sub: 3 },
      },
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  describe('users and keys', () => {
    it('issues sk-tb- keys of 48 hex characters and never shows them again', async () => {
      const { user, key, keyId } = await userWithKey(gateway, { balance: 5 });
      expect(key).toMatch(/^sk-tb-[0-9a-f]{48}$/);
      const detail = await gateway.call<{ keys: Array<Record<string, unknown>> }>('GET', `/admin/api/users/${user.id}`);
      expect(detail.body.keys).toEqual([
        { id: keyId, name: 'test', key_prefix: key.slice(0, 14), created_at: expect.any(String), revoked_at: null },
      ]);
      expect(JSON.stringify(detail.body)).not.toContain(key);
    });

    it('lets a user key call the API and see its own account', async () => {
      const { user, key } = await userWithKey(gateway, { balance: 5 });
      const completion = await gateway
        .openai(key)
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hello there' }] });
      expect(completion.choices[0].message.content).toBe('Echo: hello there');
      const me = await gateway.call<User & { keys: unknown[] }>('GET', '/user/api/me', undefined, key);
      expect(me.body).toMatchObject({ id: user.id, tier: 'payg', active: true });
      expect(me.body.keys).toHaveLength(1);
    });

    it('refuses a revoked key with 401', async () => {
      const { user, key, keyId } = await userWithKey(gateway, { balance: 5 });
      expect((await gateway.call('DELETE', `/admin/api/users/${user.id}/keys/${keyId}`)).status).toBe(200);
      await expect(gateway.openai(key).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    });

    it('refuses the key of a deactivated user with 403', async () => {
      const { user, key } = await userWithKey(gateway, { balance: 5 });
      expect((await gateway.call('PATCH', `/admin/api/users/${user.id}`, { active: false })).status).toBe(200);
      await expect(gateway.openai(key).models.list()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    });

    it('keeps the admin API to the admin key', async () => {
      const { key } = await userWithKey(gateway);
      const denied = await gateway.call<{ error: { type: string } }>('GET', '/admin/api/users', undefined, key);
      expect(denied.status).toBe(403);
      expect(denied.body.error.type).toBe('permission_error');
    });

    it('rejects a duplicate email and an invalid tier', async () => {
      const { user } = await userWithKey(gateway);
      expect((await gateway.call('POST', '/admin/api/users', { email: user.email })).status).toBe(409);
      const invalid = await gateway.call<{ error: { param: string } }>('POST', '/admin/api/users', {
        email: 'x@example.com',
        tier: 'gold',
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.param).toBe('tier');
    });

    it('tops up and sets balances', async () => {
      const { user, key } = await userWithKey(gateway, { balance: 1 });
      expect(
        (await gateway.call<User>('POST', `/admin/api/users/${user.id}/topup`, { amount: 2.5 })).body.balance,
      ).toBe(3.5);
      expect((await gateway.call<User>('PATCH', `/admin/api/users/${user.id}`, { balance: 0.25 })).body.balance).toBe(
        0.25,
      );
      expect(await balanceOf(gateway, key)).toBe(0.25);
    });
  });

  describe('PAYG charging', () => {
    it('charges the exact usage of a call at the configured prices and records it', async () => {
      const { key } = await userWithKey(gateway, { balance: 1 });
      const completion = await gateway
        .openai(key)
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hello there friend' }] });
      expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
      // 3 × 1/1000 + 4 × 2/1000 = 0.011
      expect(await balanceOf(gateway, key)).toBeCloseTo(0.989, 9);
      const usage = await gateway.call<Usage>('GET', '/user/api/usage?days=1', undefined, key);
      expect(usage.body).toMatchObject({ requests: 1, prompt_tokens: 3, completion_tokens: 4 });
      expect(usage.body.cost).toBeCloseTo(0.011, 9);
      expect(usage.body.by_model).toEqual([
        { model: 'llama3.2', requests: 1, prompt_tokens: 3, completion_tokens: 4, cost: 0.011 },
      ]);
      expect(usage.body.by_day).toEqual([
        {
          date: new Date().toISOString().slice(0, 10),
          requests: 1,
          prompt_tokens: 3,
          completion_tokens: 4,
          cost: 0.011,
        },
      ]);
    });

    it('settles calls in another gateway process shortly after, and all of them when it shuts down', async () => {
      const { key } = await userWithKey(gateway, { balance: 100 });
      const other = await gateway.anotherInstance();
      const client = new OpenAI({ apiKey: key, baseURL: `${other.baseUrl}/v1`, maxRetries: 0 });
      const call = () =>
        client.chat.completions.create({
          model: 'llama3.2',
          messages: [{ role: 'user', content: 'hello there friend' }],
        });
      await call();
      // Settled off the response path, so another process sees it within moments (written once the answer is sent).
      const first = await eventually(
        () => gateway.call<Usage>('GET', '/user/api/usage?days=1', undefined, key),
        (usage) => usage.body.requests === 1,
      );
      expect(first.body.requests).toBe(1);
      expect(await balanceOf(gateway, key)).toBeCloseTo(100 - 0.011, 9);
      // Calls answered right before a graceful shutdown are written before the database closes.
      await Promise.all([call(), call(), call()]);
      await other.close();
      const usage = await gateway.call<Usage>('GET', '/user/api/usage?days=1', undefined, key);
      expect(usage.body).toMatchObject({ requests: 4, prompt_tokens: 12, completion_tokens: 16 });
      expect(await balanceOf(gateway, key)).toBeCloseTo(100 - 4 * 0.011, 9);
    });

    it('charges a stream from its final usage', async () => {
      const { key } = await userWithKey(gateway, { balance: 1 });
      const stream = await gateway.openai(key).chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'a b c d e' }],
        stream: true,
      });
      for await (const _chunk of stream) void _chunk;
      // 5 prompt words; "Echo:" + 5 words = 6 records: 0.005 + 0.012.
      expect(await balanceOf(gateway, key)).toBeCloseTo(1 - 0.017, 9);
    });

    it('charges embeddings at the model price', async () => {
      const { key } = await userWithKey(gateway, { balance: 1 });
      await gateway.openai(key).embeddings.create({ model: 'nomic-embed-text', input: ['one two', 'three'] });
      expect(await balanceOf(gateway, key)).toBeCloseTo(1 - 0.03, 9);
    });

    it('bills what was generated when the client leaves a stream early', async () => {
      const { key } = await userWithKey(gateway, { balance: 1 });
      gateway.ollama.tokenDelayMs = 30;
      try {
        const controller = new AbortController();
        const stream = await gateway.openai(key).chat.completions.create(
          {
            model: 'llama3.2',
            messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' }],
            stream: true,
          },
          { signal: controller.signal },
        );
        let received = 0;
        await (async () => {
          for await (const _chunk of stream) if (++received === 3) controller.abort();
        })().catch(() => undefined);
        let usage: Usage | undefined;
        const deadline = Date.now() + 5000;
        while (Date.now() < deadline) {
          usage = (await gateway.call<Usage>('GET', '/user/api/usage', undefined, key)).body;
          if (usage.requests > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(usage?.requests).toBe(1);
        expect(usage?.completion_tokens).toBeGreaterThanOrEqual(3);
        expect(usage?.completion_tokens).toBeLessThan(27);
        expect(usage?.cost).toBeGreaterThan(0);
        expect(await balanceOf(gateway, key)).toBeCloseTo(1 - (usage?.cost ?? 0), 9);
      } finally {
        gateway.ollama.tokenDelayMs = 0;
      }
    });

    it('answers 402 insufficient_quota on a used-up balance, which the SDK does not retry', async () => {
      const { key } = await userWithKey(gateway, { balance: 0 });
      const before = gateway.ollama.requests.filter((request) => request.path === '/api/chat').length;
      const error = await gateway
        .openai(key, { maxRetries: 2 })
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_quota');
      expect(gateway.ollama.requests.filter((request) => request.path === '/api/chat').length).toBe(before);
    });

    it('serves exactly the calls a balance covers when 50 arrive at once', async () => {
      // gemma3n is priced for output only: 3 tokens at 2/1000 = 0.006 a call; 0.06 covers 10.
      const { key } = await userWithKey(gateway, { balance: 0.06 });
      const client = gateway.openai(key);
      const { served, refused } = await parallelChats(client, 50, {
        model: 'gemma3n:e4b',
        messages: [{ role: 'user', content: 'x y' }],
        max_tokens: 3,
      });
      expect(served).toHaveLength(10);
      expect(refused).toBe(40);
      expect(await balanceOf(gateway, key)).toBeCloseTo(0, 9);
      const usage = await gateway.call<Usage>('GET', '/user/api/usage', undefined, key);
      expect(usage.body.requests).toBe(10);
      expect(usage.body.cost).toBeCloseTo(0.06, 9);
    });

    it('does not charge subscribers', async () => {
      const { key } = await userWithKey(gateway, { tier: 'sub', balance: 0 });
      await gateway
        .openai(key)
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
      expect(await balanceOf(gateway, key)).toBe(0);
      expect((await gateway.call<Usage>('GET', '/user/api/usage', undefined, key)).body.requests).toBe(1);
    });
  });

  describe('rate limits', () => {
    it('sends x-ratelimit headers and a 429 with retry-after past the tier limit', async () => {
      const { key } = await userWithKey(gateway, { tier: 'sub' });
      const client = gateway.openai(key);
      const first = await client.chat.completions
        .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('2');
      expect(first.response.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+(ms|s)$/);
      await client.models.list(); // not billable: not counted
      await client.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
      await client.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
      const error = await client.chat.completions
        .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      const headers = (error as InstanceType<typeof OpenAI.RateLimitError>).headers;
      expect(Number(headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(headers.get('x-ratelimit-remaining-requests')).toBe('0');
      const status = await gateway.call<Record<string, unknown>>('GET', '/user/api/ratelimit', undefined, key);
      expect(status.body).toMatchObject({ tier: 'sub', limit: 3, remaining: 0 });
    });

    it('does not limit the admin key', async () => {
      const client = gateway.openai();
      for (let index = 0; index < 5; index += 1) {
        const response = await client.chat.completions
          .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] })
          .withResponse();
        expect(response.response.headers.get('x-ratelimit-limit-requests')).toBeNull();
      }
    });

    if (backend.name === 'mysql+redis') {
      it('counts one limit across gateway processes (Redis)', async () => {
        const { key } = await userWithKey(gateway, { tier: 'sub' });
        const other = await gateway.anotherInstance();
        try {
          const viaOther = new OpenAI({ apiKey: key, baseURL: `${other.baseUrl}/v1`, maxRetries: 0 });
          const viaFirst = gateway.openai(key);
          await viaFirst.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
          await viaOther.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
          await viaFirst.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
          await expect(
            viaOther.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] }),
          ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
        } finally {
          await other.close();
        }
      });
    }
  });
});
