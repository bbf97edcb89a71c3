import OpenAI from 'openai';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** The admin API (models, system, config, signups), the landing data and the user API's access. */

interface AdminModel {
  name: string;
  type: string;
  loaded: boolean;
  fallback_for: string[];
}

const PNG_DATA_URL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe.each(backends())('gateway admin API ($name)', (backend) => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGateway(backend, { settings: { hf_token: 'hf_secret_token_1234' } });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  describe('models', () => {
    it('lists installed models with their types and load state', async () => {
      const { status, body } = await gateway.call<{ models: AdminModel[]; running: string[] }>(
        'GET',
        '/admin/api/models',
      );
      expect(status).toBe(200);
      expect(body.models.find((model) => model.name === 'nomic-embed-text:latest')).toMatchObject({
        type: 'embedding',
        loaded: false,
      });
      expect(body.running).toEqual([]);
    });

    it('loads and unloads a model through keep_alive', async () => {
      const loaded = await gateway.call('POST', '/admin/api/models/load', { model: 'llama3.2', keep_alive: '10m' });
      expect(loaded).toMatchObject({ status: 200, body: { model: 'llama3.2:latest', loaded: true } });
      expect(gateway.ollama.lastRequest('/api/generate')).toMatchObject({
        model: 'llama3.2:latest',
        keep_alive: '10m',
      });
      let list = await gateway.call<{ models: AdminModel[]; running: string[] }>('GET', '/admin/api/models');
      expect(list.body.running).toEqual(['llama3.2:latest']);
      expect(list.body.models.find((model) => model.name === 'llama3.2:latest')?.loaded).toBe(true);
      await gateway.call('POST', '/admin/api/models/load', { model: 'nomic-embed-text' });
      expect(gateway.ollama.lastRequest('/api/embed')).toMatchObject({ model: 'nomic-embed-text:latest', input: [] });
      expect((await gateway.call('POST', '/admin/api/models/unload', { model: 'llama3.2' })).status).toBe(200);
      list = await gateway.call<{ models: AdminModel[]; running: string[] }>('GET', '/admin/api/models');
      expect(list.body.running).toEqual(['nomic-embed-text:latest']);
    });

    it('keeps a loaded model as a slot that a starting gateway loads again, until it is unloaded', async () => {
      await gateway.call('POST', '/admin/api/models/load', { model: 'llava', keep_alive: -1 });
      const file = (await gateway.storedSettings()) as { loaded_models: Record<string, unknown> };
      expect(file.loaded_models).toMatchObject({ 'llava:latest': { keep_alive: -1 } });
      const list = await gateway.call<{ models: Array<AdminModel & { slot: boolean }> }>('GET', '/admin/api/models');
      expect(list.body.models.find((model) => model.name === 'llava:latest')?.slot).toBe(true);
      // The runtime forgets it (a restart of Ollama); a gateway starting now loads it again.
      gateway.ollama.loaded.delete('llava:latest');
      const other = await gateway.anotherInstance();
      try {
        const deadline = Date.now() + 5000;
        while (!gateway.ollama.loaded.has('llava:latest') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(gateway.ollama.loaded.has('llava:latest')).toBe(true);
      } finally {
        await other.close();
      }
      await gateway.call('POST', '/admin/api/models/unload', { model: 'llava' });
      const after = await gateway.call<{ loaded_models: Record<string, unknown> }>('GET', '/admin/api/config');
      expect(after.body.loaded_models).not.toHaveProperty('llava:latest');
    });

    it('answers 404 when loading a model that is not installed', async () => {
      const { status, body } = await gateway.call<{ error: { code: string } }>('POST', '/admin/api/models/load', {
        model: 'nothing-here',
      });
      expect(status).toBe(404);
      expect(body.error.code).toBe('model_not_found');
    });

    it('streams pull progress as NDJSON and then serves the new model', async () => {
      const response = await fetch(`${gateway.baseUrl}/admin/api/models/pull`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'qwen3:0.6b' }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/x-ndjson');
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { status: string; percent?: number });
      expect(lines[0].status).toBe('pulling manifest');
      expect(lines.map((line) => line.percent).filter((percent) => percent !== undefined)).toEqual([0, 50, 100]);
      expect(lines[lines.length - 1]).toEqual({ status: 'success' });
      const model = await gateway.openai().models.retrieve('qwen3:0.6b');
      expect(model.id).toBe('qwen3:0.6b');
    });

    it('answers a failed pull with an error status, not a 200 stream', async () => {
      const { status, body } = await gateway.call<{ error: { message: string } }>('POST', '/admin/api/models/pull', {
        model: 'missing-model',
      });
      expect(status).toBe(400);
      expect(body.error.message).toContain('file does not exist');
    });

    it('deletes a model by a name with slashes', async () => {
      const { status } = await gateway.call('DELETE', '/admin/api/models/hf.co/acme/tiny-vision-vl:Q4_K_M');
      expect(status).toBe(200);
      await expect(gateway.openai().models.retrieve('hf.co/acme/tiny-vision-vl:Q4_K_M')).rejects.toBeInstanceOf(
        OpenAI.NotFoundError,
      );
    });
  });

  describe('system', () => {
    it('reports host, runtime and request rates', async () => {
      await gateway
        .openai()
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'count me' }] });
      const { status, body } = await gateway.call<{
        cpu: { cores: number };
        memory: { total_bytes: number };
        gpus: unknown[];
        runtime: { reachable: boolean; version: string };
        requests: { last_minute: number };
      }>('GET', '/admin/api/system');
      expect(status).toBe(200);
      expect(body.cpu.cores).toBeGreaterThan(0);
      expect(body.memory.total_bytes).toBeGreaterThan(0);
      expect(Array.isArray(body.gpus)).toBe(true);
      expect(body.runtime).toMatchObject({ reachable: true, version: '0.12.0' });
      expect(body.requests.last_minute).toBeGreaterThanOrEqual(1);
    });
  });

  describe('config', () => {
    it('shows the configuration with the secrets masked', async () => {
      const { body } = await gateway.call<Record<string, unknown>>('GET', '/admin/api/config');
      expect(body.hf_token).toBe('********1234');
      expect(body.admin_key).toBe(`********${gateway.adminKey.slice(-4)}`);
      expect(JSON.stringify(body)).not.toContain('hf_secret_token');
      expect(body.rate_limits).toEqual({ payg: 5, sub: 10 });
    });

    it('merges a PATCH, validates it whole and stores it (the file, or the shared database on MySQL)', async () => {
      const patched = await gateway.call<Record<string, unknown>>('PATCH', '/admin/api/config', {
        rate_limits: { payg: 7 },
        hf_token: '********1234',
      });
      expect(patched.status).toBe(200);
      expect(patched.body.rate_limits).toEqual({ payg: 7, sub: 10 });
      const file = await gateway.storedSettings();
      expect(file.rate_limits).toEqual({ payg: 7, sub: 10 });
      // The masked token sent back unchanged keeps the real one.
      expect(file.hf_token).toBe('hf_secret_token_1234');
    });

    it('rejects invalid values, unknown keys and an admin key change, changing nothing', async () => {
      for (const change of [
        { rate_limits: { sub: 0 } },
        { fallback_models: { vision: 42 } },
        { colour: 'blue' },
        { admin_key: 'sk-tb-another-key-that-is-long-enough' },
      ]) {
        const { status, body } = await gateway.call<{ error: { message: string } }>(
          'PATCH',
          '/admin/api/config',
          change,
        );
        expect(status).toBe(400);
        expect(body.error.message).toMatch(/rate_limits\.sub|fallback_models\.vision|colour|admin_key/);
      }
      expect((await gateway.call<{ rate_limits: unknown }>('GET', '/admin/api/config')).body.rate_limits).toEqual({
        payg: 7,
        sub: 10,
      });
    });

    it('routes by a fallback configured through the API', async () => {
      const before = await gateway
        .openai()
        .chat.completions.create({
          model: 'llama3.2',
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG_DATA_URL } }] }],
        })
        .catch((caught: unknown) => caught);
      expect(before).toBeInstanceOf(OpenAI.BadRequestError);
      await gateway.call('PATCH', '/admin/api/config', { fallback_models: { vision: 'llava' } });
      const after = await gateway.openai().chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG_DATA_URL } }] }],
      });
      expect(after.model).toBe('llava');
      const models = await gateway.call<{ models: AdminModel[] }>('GET', '/admin/api/models');
      expect(models.body.models.find((model) => model.name === 'llava:latest')?.fallback_for).toEqual(['vision']);
    });
  });

  describe('signups', () => {
    it('takes a public signup request, which an admin approves into a user with a working key', async () => {
      const requested = await gateway.call<{ id: string; status: string }>(
        'POST',
        '/api/signup',
        { email: 'Grace@Example.com', note: 'for my thesis' },
        '',
      );
      expect(requested.status).toBe(201);
      expect(requested.body.status).toBe('pending');
      expect((await gateway.call('POST', '/api/signup', { email: 'grace@example.com' }, '')).status).toBe(409);
      const pending = await gateway.call<{ signups: Array<{ id: string; email: string }> }>(
        'GET',
        '/admin/api/signups?status=pending',
      );
      expect(pending.body.signups).toEqual([
        expect.objectContaining({ id: requested.body.id, email: 'grace@example.com' }),
      ]);
      const approved = await gateway.call<{
        user: { tier: string; balance: number };
        key: string;
        signup: { status: string };
      }>('POST', `/admin/api/signups/${requested.body.id}/approve`, { tier: 'sub' });
      expect(approved.status).toBe(200);
      expect(approved.body.signup.status).toBe('approved');
      expect(approved.body.user).toMatchObject({ tier: 'sub', balance: 0 });
      const me = await gateway.call<{ email: string }>('GET', '/user/api/me', undefined, approved.body.key);
      expect(me.body.email).toBe('grace@example.com');
      expect((await gateway.call('POST', `/admin/api/signups/${requested.body.id}/approve`, {})).status).toBe(409);
    });

    it('rejects a request', async () => {
      const requested = await gateway.call<{ id: string }>('POST', '/api/signup', { email: 'mallory@example.com' }, '');
      const rejected = await gateway.call<{ status: string }>('POST', `/admin/api/signups/${requested.body.id}/reject`);
      expect(rejected).toMatchObject({ status: 200, body: { status: 'rejected' } });
    });

    it('refuses an invalid email with 422 naming the field', async () => {
      const { status, body } = await gateway.call<{ error: { param: string } }>(
        'POST',
        '/api/signup',
        { email: 'nope' },
        '',
      );
      expect(status).toBe(422);
      expect(body.error.param).toBe('email');
    });
  });

  describe('landing data and access', () => {
    it('serves /health, /api/models and /api/uptime without a key', async () => {
      const models = (await (await fetch(`${gateway.baseUrl}/api/models`)).json()) as {
        models: Array<{ id: string; type: string }>;
      };
      expect(models.models).toContainEqual({ id: 'gemma3n:e4b', type: 'omni' });
      const health = await fetch(`${gateway.baseUrl}/health`);
      expect(health.status).toBe(200);
      // The original gateway's clients read `timestamp` and `active_models` (the installed models) here.
      const liveness = (await health.json()) as { status: string; timestamp: string; active_models: number };
      expect(liveness.status).toBe('ok');
      expect(Math.abs(Date.parse(liveness.timestamp) - Date.now())).toBeLessThan(60_000);
      expect(liveness.active_models).toBe(models.models.length);
      const uptime = (await (await fetch(`${gateway.baseUrl}/api/uptime`)).json()) as Record<string, unknown>;
      expect(uptime).toMatchObject({ runtime_reachable: true, uptime_seconds: expect.any(Number) });
    });

    it('serves the pricing and per-tier limits of the config without a key', async () => {
      await gateway.call('PATCH', '/admin/api/config', {
        model_prices: { 'llava:latest': { input_per_1k: 0.002, output_per_1k: 0.004 } },
      });
      const response = await fetch(`${gateway.baseUrl}/api/pricing`);
      expect(response.status).toBe(200);
      const config = (await gateway.call<{ prices: unknown; rate_limits: unknown }>('GET', '/admin/api/config')).body;
      expect(await response.json()).toEqual({
        prices: config.prices,
        model_prices: { 'llava:latest': { input_per_1k: 0.002, output_per_1k: 0.004 } },
        rate_limits: config.rate_limits,
      });
      await gateway.call('PATCH', '/admin/api/config', { model_prices: {} });
    });

    it('gives an admin a user’s usage per model, and 404 for an unknown user', async () => {
      const user = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
        email: 'metered@example.com',
        tier: 'sub',
      });
      const key = (await gateway.call<{ key: string }>('POST', `/admin/api/users/${user.body.id}/keys`, {})).body.key;
      await gateway
        .openai(key)
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
      const usage = await gateway.call<{ requests: number; by_model: Array<{ model: string; requests: number }> }>(
        'GET',
        `/admin/api/users/${user.body.id}/usage?days=7`,
      );
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({ days: 7, requests: 1, by_model: [{ model: 'llama3.2', requests: 1 }] });
      const unknown = await gateway.call('GET', '/admin/api/users/00000000-0000-4000-8000-000000000000/usage');
      expect(unknown.status).toBe(404);
      expect((await gateway.call('GET', `/admin/api/users/${user.body.id}/usage`, undefined, key)).status).toBe(403);
    });

    it('keeps every admin route to the admin key and every user route to a key', async () => {
      const user = await gateway.call<{ id: string }>('POST', '/admin/api/users', { email: 'plain@example.com' });
      const key = (await gateway.call<{ key: string }>('POST', `/admin/api/users/${user.body.id}/keys`, {})).body.key;
      const adminRoutes: Array<[string, string]> = [
        ['GET', '/admin/api/users'],
        ['GET', '/admin/api/models'],
        ['POST', '/admin/api/models/load'],
        ['POST', '/admin/api/models/pull'],
        ['DELETE', '/admin/api/models/llama3.2'],
        ['GET', '/admin/api/system'],
        ['GET', '/admin/api/config'],
        ['PATCH', '/admin/api/config'],
        ['PUT', '/admin/api/config'],
        ['POST', '/admin/api/admin-key'],
        ['GET', '/admin/api/signups'],
      ];
      for (const [method, path] of adminRoutes) {
        const body = method === 'GET' ? undefined : {};
        expect([method, path, (await gateway.call(method, path, body, key)).status]).toEqual([method, path, 403]);
        const anonymous = await fetch(`${gateway.baseUrl}${path}`, { method });
        expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      }
      for (const path of ['/user/api/me', '/user/api/usage', '/user/api/ratelimit', '/v1/models']) {
        expect([path, (await fetch(`${gateway.baseUrl}${path}`)).status]).toEqual([path, 401]);
      }
    });
  });

  // Last: it replaces the admin key the other tests use.
  describe('admin key', () => {
    it('issues a new admin key once, which works while the old one is refused from then on', async () => {
      const rotated = await gateway.call<{ admin_key: string }>('POST', '/admin/api/admin-key', {});
      expect(rotated.status).toBe(200);
      expect(rotated.body.admin_key).toMatch(/^sk-tb-[0-9a-f]{48}$/);
      const withNew = await gateway.call<Record<string, unknown>>(
        'GET',
        '/admin/api/config',
        undefined,
        rotated.body.admin_key,
      );
      expect(withNew.status).toBe(200);
      expect(withNew.body.admin_key).toBe(`********${rotated.body.admin_key.slice(-4)}`);
      const withOld = await gateway.call<{ error: { code: string } }>('GET', '/admin/api/config');
      expect(withOld.status).toBe(401);
      expect(withOld.body.error.code).toBe('invalid_api_key');
      // The file keeps the key itself (mode 0600); the shared database only its hash.
      const stored = JSON.stringify(await gateway.storedSettings());
      expect(stored.includes(rotated.body.admin_key)).toBe(gateway.config.gateway.settingsStore === 'file');
    });
  });
});
