import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';
import { declaredRouteAccess } from '../../support/route-access.js';

/**
 * Every gateway route with its declared access (the gateway's own keys: `sk-tb-…` user keys or the admin
 * key), so a new route fails until it is listed; and the OpenAPI document types every route's answer.
 */
describe('gateway routes', () => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGateway(backends()[0]);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('declares the expected access for every route', () => {
    expect(declaredRouteAccess(gateway.app)).toEqual(EXPECTED);
  });

  it('documents a typed success answer for every route in the OpenAPI document at /docs-json', async () => {
    const response = await fetch(`${gateway.baseUrl}/docs-json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
      >;
    };
    const untyped: string[] = [];
    let operations = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations += 1;
        const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
        const typed = success && Object.values(success[1].content ?? {}).some((media) => media.schema);
        if (!typed && !(method === 'head')) untyped.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(untyped).toEqual([]);
    expect(operations).toBe(Object.keys(EXPECTED).length);
    expect((await fetch(`${gateway.baseUrl}/docs`)).headers.get('content-type')).toContain('text/html');
  });
});

const EXPECTED: Record<string, string> = {
  'POST /admin/api/admin-key': 'gateway-key: admin',
  'GET /admin/api/config': 'gateway-key: admin',
  'PATCH /admin/api/config': 'gateway-key: admin',
  'PUT /admin/api/config': 'gateway-key: admin',
  'GET /admin/api/models': 'gateway-key: admin',
  'DELETE /admin/api/models/*name': 'gateway-key: admin',
  'POST /admin/api/models/download-hf': 'gateway-key: admin',
  'GET /admin/api/models/hf-files': 'gateway-key: admin',
  'POST /admin/api/models/import-gguf': 'gateway-key: admin',
  'POST /admin/api/models/load': 'gateway-key: admin',
  'POST /admin/api/models/pull': 'gateway-key: admin',
  'GET /admin/api/models/search-hf': 'gateway-key: admin',
  'POST /admin/api/models/unload': 'gateway-key: admin',
  'GET /admin/api/signups': 'gateway-key: admin',
  'POST /admin/api/signups/:id/approve': 'gateway-key: admin',
  'POST /admin/api/signups/:id/reject': 'gateway-key: admin',
  'GET /admin/api/system': 'gateway-key: admin',
  'GET /admin/api/users': 'gateway-key: admin',
  'POST /admin/api/users': 'gateway-key: admin',
  'GET /admin/api/users/:id': 'gateway-key: admin',
  'PATCH /admin/api/users/:id': 'gateway-key: admin',
  'GET /admin/api/users/:id/usage': 'gateway-key: admin',
  'POST /admin/api/users/:id/keys': 'gateway-key: admin',
  'DELETE /admin/api/users/:id/keys/:keyId': 'gateway-key: admin',
  'POST /admin/api/users/:id/topup': 'gateway-key: admin',
  'GET /api/models': 'gateway-key: public',
  'GET /api/pricing': 'gateway-key: public',
  'POST /api/signup': 'gateway-key: public',
  'GET /api/uptime': 'gateway-key: public',
  'GET /api/v1/health': 'gateway-key: public',
  'HEAD /api/v1/health': 'gateway-key: public',
  'GET /api/v1/ready': 'gateway-key: public',
  'GET /health': 'gateway-key: public',
  'HEAD /health': 'gateway-key: public',
  'GET /ready': 'gateway-key: public',
  'GET /user/api/me': 'gateway-key: authenticated',
  'GET /user/api/ratelimit': 'gateway-key: authenticated',
  'GET /user/api/usage': 'gateway-key: authenticated',
  'POST /v1/audio/live': 'gateway-key: authenticated',
  'DELETE /v1/audio/live/:token': 'gateway-key: authenticated',
  'GET /v1/audio/live/:token': 'gateway-key: authenticated',
  'POST /v1/audio/speech': 'gateway-key: authenticated',
  'POST /v1/audio/transcriptions': 'gateway-key: authenticated',
  'POST /v1/chat/completions': 'gateway-key: authenticated',
  'POST /v1/embeddings': 'gateway-key: authenticated',
  'GET /v1/models': 'gateway-key: authenticated',
  'GET /v1/models/*id': 'gateway-key: authenticated',
};
