import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { declaredRouteAccess } from '../../support/route-access.js';

/**
 * Every route of the registry with its declared access. A new route fails this test until it is listed
 * here, so nothing ships unguarded by accident (routes without a decorator require a token).
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
  'GET /api/v1/admin/audit': 'admin',
  'GET /api/v1/artifacts': 'public',
  'POST /api/v1/artifacts': 'authenticated',
  'GET /api/v1/artifacts/:name': 'public',
  'GET /api/v1/artifacts/:name/:version': 'public',
  'POST /api/v1/artifacts/:name/builds': 'authenticated',
  'GET /api/v1/artifacts/:name/latest': 'public',
  'GET /api/v1/artifacts/:name/versions/:version/download': 'public',
  'GET /api/v1/auth/me': 'authenticated',
  'GET /api/v1/auth/publisher': 'authenticated',
  'POST /api/v1/auth/register-publisher': 'authenticated',
  'GET /api/v1/files/*key': 'signed-url',
  'GET /api/v1/health': 'public',
  'HEAD /api/v1/health': 'public',
  'GET /api/v1/packages': 'public',
  'POST /api/v1/packages': 'authenticated',
  'DELETE /api/v1/packages/:name': 'admin',
  'GET /api/v1/packages/:name': 'public',
  'PATCH /api/v1/packages/:name': 'authenticated',
  'GET /api/v1/packages/:name/diff/:from/:to': 'public',
  'GET /api/v1/packages/:name/diff/:from/:to/download': 'public',
  'POST /api/v1/packages/:name/diff/create': 'authenticated',
  'POST /api/v1/packages/:name/upload': 'authenticated',
  'POST /api/v1/packages/:name/versions': 'authenticated',
  'GET /api/v1/packages/:name/versions/:version': 'public',
  'GET /api/v1/packages/:name/versions/:version/download': 'public',
  'POST /api/v1/packages/:name/versions/:version/unyank': 'authenticated',
  'POST /api/v1/packages/:name/versions/:version/yank': 'authenticated',
  'POST /api/v1/packages/admin/:publisher_id/reject': 'admin',
  'POST /api/v1/packages/admin/:publisher_id/revoke': 'admin',
  'POST /api/v1/packages/admin/:publisher_id/suspend': 'admin',
  'POST /api/v1/packages/admin/:publisher_id/unsuspend': 'admin',
  'POST /api/v1/packages/admin/:publisher_id/verify': 'admin',
  'GET /api/v1/packages/admin/pending': 'admin',
  'GET /api/v1/publishers': 'public',
  'GET /api/v1/publishers/:name': 'public',
  'POST /api/v1/publishers/admin/:publisher_id/reject': 'admin',
  'POST /api/v1/publishers/admin/:publisher_id/revoke': 'admin',
  'POST /api/v1/publishers/admin/:publisher_id/suspend': 'admin',
  'POST /api/v1/publishers/admin/:publisher_id/unsuspend': 'admin',
  'POST /api/v1/publishers/admin/:publisher_id/verify': 'admin',
  'GET /api/v1/publishers/admin/pending': 'admin',
  'POST /api/v1/publishers/verify': 'authenticated',
  'GET /api/v1/ready': 'public',
  'POST /api/v1/resolve': 'public',
  'GET /api/v1/resolve/check': 'public',
  'POST /api/v1/resolve/check': 'public',
  'GET /api/v1/search': 'public',
  'GET /api/v1/search/suggest': 'public',
  'GET /api/v1/search/suggestions': 'public',
  'GET /api/v1/versions': 'public',
  'POST /api/v1/versions': 'public',
  'GET /health': 'public',
  'HEAD /health': 'public',
  'GET /ready': 'public',
};
