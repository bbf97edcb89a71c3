import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN } from '../../support/registry-fixtures.js';

describe.each(backends())('platform conventions on $name', (backend) => {
  describe('rate limits', () => {
    let registry: RegistryUnderTest;

    beforeAll(async () => {
      registry = await startRegistry(backend, { RATE_LIMIT_ANON_PER_HOUR: '3', RATE_LIMIT_AUTH_PER_HOUR: '5' });
    });

    afterAll(async () => {
      await registry?.close();
    });

    it('counts anonymous requests per IP with X-RateLimit headers and answers 429 with Retry-After past the limit', async () => {
      const remaining: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const response = await registry.api.get('/api/v1/packages');
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe('3');
        remaining.push(response.headers.get('x-ratelimit-remaining')!);
        expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const limited = await registry.api.get('/api/v1/packages');
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('RATE_LIMITED');
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    it('gives each authenticated user their own, larger allowance', async () => {
      const client = registry.as({ id: 'limited-user', username: 'lim' });
      const first = await client.get('/api/v1/packages');
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-limit')).toBe('5');
      for (let index = 0; index < 4; index += 1) expect((await client.get('/api/v1/packages')).status).toBe(200);
      expect((await client.get('/api/v1/packages')).status).toBe(429);
      expect((await registry.as({ id: 'other-user', username: 'o' }).get('/api/v1/packages')).status).toBe(200);
    });

    it('does not limit admins', async () => {
      const admin = registry.as(ADMIN);
      for (let index = 0; index < 8; index += 1) expect((await admin.get('/api/v1/packages')).status).toBe(200);
    });

    it('never limits the health check', async () => {
      for (let index = 0; index < 5; index += 1) expect((await registry.api.get('/api/v1/health')).status).toBe(200);
    });
  });

  describe('health, readiness, docs and errors', () => {
    let registry: RegistryUnderTest;

    beforeAll(async () => {
      registry = await startRegistry(backend);
    });

    afterAll(async () => {
      await registry?.close();
    });

    it.each(['/api/v1/health', '/health'])('answers GET %s with status, version and uptime', async (path) => {
      const response = await registry.api.get(path);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        status: 'ok',
        version: expect.any(String),
        uptime_seconds: expect.any(Number),
      });
    });

    it('answers HEAD /api/v1/health with 200', async () => {
      expect((await registry.api.head('/api/v1/health')).status).toBe(200);
    });

    it('is ready when the database, storage, queue (and Redis when configured) answer', async () => {
      const response = await registry.api.get('/api/v1/ready');
      expect(response.status).toBe(200);
      expect(Object.keys(response.body.checks)).toEqual(
        expect.arrayContaining(['database', 'storage', 'queue', ...(backend.name === 'mysql+redis' ? ['redis'] : [])]),
      );
    });

    it('serves Swagger UI and an OpenAPI document with every registry route and bearer auth', async () => {
      const ui = await registry.api.get('/api/docs');
      expect(ui.status).toBe(200);
      expect(ui.bytes.toString()).toContain('swagger-ui');
      const document = await registry.api.get('/api/docs-json');
      expect(document.status).toBe(200);
      expect(document.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      for (const path of [
        '/api/v1/packages',
        '/api/v1/packages/{name}',
        '/api/v1/packages/{name}/upload',
        '/api/v1/auth/me',
        '/api/v1/health',
      ]) {
        expect(document.body.paths[path]).toBeDefined();
      }
      expect(document.body.paths['/api/v1/packages'].post.security).toEqual([{ bearer: [] }]);
    });

    it('answers an unknown route with the JSON error body', async () => {
      const response = await registry.api.get('/api/v1/nothing-here');
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({
        code: 'NOT_FOUND',
        message: expect.any(String),
        request_id: expect.any(String),
      });
      expect(response.body.detail).toBe(response.body.message);
    });

    it('answers malformed JSON with 400, not 500', async () => {
      const response = await registry
        .as({ id: 'json-user', username: 'j' })
        .post('/api/v1/auth/register-publisher', '{"name": ');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
    });

    it('echoes a sane X-Request-Id into the error body', async () => {
      const response = await registry.api.get('/api/v1/packages/none-such', { 'x-request-id': 'trace-123' });
      expect(response.headers.get('x-request-id')).toBe('trace-123');
      expect(response.body.request_id).toBe('trace-123');
    });
  });

  describe('readiness failure', () => {
    it('answers 503 naming the dependency that failed', async () => {
      const registry = await startRegistry(backend, { STORAGE_PRIMARY: 'file:///proc/toolbox-not-writable' });
      try {
        const response = await registry.api.get('/api/v1/ready');
        expect(response.status).toBe(503);
        expect(response.body.failed).toEqual(['storage']);
        expect(response.body.message).toContain('storage');
      } finally {
        await registry.close();
      }
    });
  });
});
