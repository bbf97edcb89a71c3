import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { declaredRouteAccess } from '../../support/route-access.js';

/**
 * Every route of the registry with its declared access: the strategy (the registry takes JWT bearer
 * tokens only) and the need (public, authenticated at any level, admin). A new route fails this test
 * until it is listed here, so nothing ships unguarded by accident (routes without a decorator require a token).
 */
describe('registry route access', () => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backends()[0]);
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('declares the expected access for every route', () => {
    expect(declaredRouteAccess(registry.app)).toEqual(EXPECTED);
  });
});

const EXPECTED: Record<string, string> = {
  'GET /api/v1/admin/audit': 'jwt: admin',
  'GET /api/v1/artifacts': 'jwt: public',
  'POST /api/v1/artifacts': 'jwt: authenticated',
  'GET /api/v1/artifacts/:name': 'jwt: public',
  'GET /api/v1/artifacts/:name/:version': 'jwt: public',
  'POST /api/v1/artifacts/:name/builds': 'jwt: authenticated',
  'GET /api/v1/artifacts/:name/latest': 'jwt: public',
  'GET /api/v1/artifacts/:name/versions/:version/download': 'jwt: public',
  'GET /api/v1/auth/me': 'jwt: authenticated',
  'GET /api/v1/auth/publisher': 'jwt: authenticated',
  'POST /api/v1/auth/register-publisher': 'jwt: authenticated',
  'GET /api/v1/files/*key': 'ignores credentials',
  'GET /api/v1/health': 'jwt: public',
  'HEAD /api/v1/health': 'jwt: public',
  'GET /api/v1/packages': 'jwt: public',
  'POST /api/v1/packages': 'jwt: authenticated',
  'DELETE /api/v1/packages/:name': 'jwt: admin',
  'GET /api/v1/packages/:name': 'jwt: public',
  'PATCH /api/v1/packages/:name': 'jwt: authenticated',
  'GET /api/v1/packages/:name/diff/:from/:to': 'jwt: public',
  'GET /api/v1/packages/:name/diff/:from/:to/download': 'jwt: public',
  'POST /api/v1/packages/:name/diff/create': 'jwt: authenticated',
  'POST /api/v1/packages/:name/upload': 'jwt: authenticated',
  'POST /api/v1/packages/:name/versions': 'jwt: authenticated',
  'GET /api/v1/packages/:name/versions/:version': 'jwt: public',
  'GET /api/v1/packages/:name/versions/:version/download': 'jwt: public',
  'POST /api/v1/packages/:name/versions/:version/unyank': 'jwt: authenticated',
  'POST /api/v1/packages/:name/versions/:version/yank': 'jwt: authenticated',
  'POST /api/v1/packages/admin/:publisher_id/reject': 'jwt: admin',
  'POST /api/v1/packages/admin/:publisher_id/revoke': 'jwt: admin',
  'POST /api/v1/packages/admin/:publisher_id/suspend': 'jwt: admin',
  'POST /api/v1/packages/admin/:publisher_id/unsuspend': 'jwt: admin',
  'POST /api/v1/packages/admin/:publisher_id/verify': 'jwt: admin',
  'GET /api/v1/packages/admin/pending': 'jwt: admin',
  'GET /api/v1/publishers': 'jwt: public',
  'GET /api/v1/publishers/:name': 'jwt: public',
  'POST /api/v1/publishers/admin/:publisher_id/reject': 'jwt: admin',
  'POST /api/v1/publishers/admin/:publisher_id/revoke': 'jwt: admin',
  'POST /api/v1/publishers/admin/:publisher_id/suspend': 'jwt: admin',
  'POST /api/v1/publishers/admin/:publisher_id/unsuspend': 'jwt: admin',
  'POST /api/v1/publishers/admin/:publisher_id/verify': 'jwt: admin',
  'GET /api/v1/publishers/admin/pending': 'jwt: admin',
  'POST /api/v1/publishers/verify': 'jwt: authenticated',
  'GET /api/v1/ready': 'jwt: public',
  'POST /api/v1/resolve': 'jwt: public',
  'GET /api/v1/resolve/check': 'jwt: public',
  'POST /api/v1/resolve/check': 'jwt: public',
  'GET /api/v1/search': 'jwt: public',
  'GET /api/v1/search/suggest': 'jwt: public',
  'GET /api/v1/search/suggestions': 'jwt: public',
  'GET /api/v1/versions': 'jwt: public',
  'POST /api/v1/versions': 'jwt: public',
  'GET /health': 'jwt: public',
  'HEAD /health': 'jwt: public',
  'GET /ready': 'jwt: public',
};
