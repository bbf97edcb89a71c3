import { createHmac } from 'node:crypto';
import { backends } from '../../support/backends.js';
import { TEST_SECRET, startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { publisherFactory } from '../../support/registry-fixtures.js';

function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** Hand-made tokens, so the tests can forge what a real signer never would. */
function forge(header: Record<string, unknown>, claims: Record<string, unknown>, secret = TEST_SECRET): string {
  const unsigned = `${base64url(header)}.${base64url(claims)}`;
  if (header.alg === 'none') return `${unsigned}.`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe.each(backends())('authentication on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend, { REGISTRY_ADMIN_USERS: 'configured-admin' });
  });

  afterAll(async () => {
    await registry?.close();
  });

  const me = (token: string) => registry.api.get('/api/v1/auth/me', { authorization: `Bearer ${token}` });

  it('accepts an HS256 token and creates the user at the first request', async () => {
    const response = await me(
      forge(
        { alg: 'HS256', typ: 'JWT' },
        { user_id: 'u-first', username: 'first', email: 'f@example.com', exp: inAnHour() },
      ),
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      platform_user_id: 'u-first',
      username: 'first',
      email: 'f@example.com',
      is_admin: false,
      publisher_id: null,
      is_verified: false,
    });
    expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('takes the user id from sub when user_id is absent', async () => {
    const response = await me(forge({ alg: 'HS256' }, { sub: 'u-sub', username: 'subby', exp: inAnHour() }));
    expect(response.status).toBe(200);
    expect(response.body.platform_user_id).toBe('u-sub');
  });

  it('refreshes username and e-mail from later tokens and keeps the same user', async () => {
    const first = await me(
      forge({ alg: 'HS256' }, { user_id: 'u-refresh', username: 'old', email: 'old@example.com', exp: inAnHour() }),
    );
    const second = await me(
      forge({ alg: 'HS256' }, { user_id: 'u-refresh', username: 'new', email: 'new@example.com', exp: inAnHour() }),
    );
    expect(second.body.id).toBe(first.body.id);
    expect(second.body).toMatchObject({ username: 'new', email: 'new@example.com' });
  });

  it('rejects alg none with 401', async () => {
    const response = await me(forge({ alg: 'none' }, { user_id: 'u-none', username: 'x', exp: inAnHour() }));
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHORIZED');
  });

  it('rejects HS512 with 401', async () => {
    const unsigned = `${base64url({ alg: 'HS512' })}.${base64url({ user_id: 'u-512', username: 'x', exp: inAnHour() })}`;
    const token = `${unsigned}.${createHmac('sha512', TEST_SECRET).update(unsigned).digest('base64url')}`;
    expect((await me(token)).status).toBe(401);
  });

  it('rejects a token signed with another secret', async () => {
    const response = await me(
      forge({ alg: 'HS256' }, { user_id: 'u-x', username: 'x', exp: inAnHour() }, 'another-secret-another-secret'),
    );
    expect(response.status).toBe(401);
  });

  it('rejects a token without exp', async () => {
    const response = await me(forge({ alg: 'HS256' }, { user_id: 'u-noexp', username: 'x' }));
    expect(response.status).toBe(401);
    expect(response.body.detail).toMatch(/exp/);
  });

  it('rejects an expired token', async () => {
    const response = await me(
      forge({ alg: 'HS256' }, { user_id: 'u-old', username: 'x', exp: Math.floor(Date.now() / 1000) - 10 }),
    );
    expect(response.status).toBe(401);
    expect(response.body.detail).toMatch(/expired/);
  });

  it('rejects a token without user_id or sub', async () => {
    expect((await me(forge({ alg: 'HS256' }, { username: 'x', exp: inAnHour() }))).status).toBe(401);
  });

  it('rejects a malformed Authorization header', async () => {
    const response = await registry.api.get('/api/v1/auth/me', { authorization: 'Basic abc' });
    expect(response.status).toBe(401);
  });

  it('requires a token for /auth/me', async () => {
    const response = await registry.api.get('/api/v1/auth/me');
    expect(response.status).toBe(401);
    expect(response.body.detail).toMatch(/Bearer/);
  });

  it('rejects a bad token even on a public route instead of treating the caller as anonymous', async () => {
    expect((await registry.api.get('/api/v1/packages', { authorization: 'Bearer garbage' })).status).toBe(401);
  });

  it('makes level -1 an admin', async () => {
    const response = await me(
      forge({ alg: 'HS256' }, { user_id: 'u-level', username: 'lvl', level: -1, exp: inAnHour() }),
    );
    expect(response.body.is_admin).toBe(true);
  });

  it('makes users listed in REGISTRY_ADMIN_USERS admins', async () => {
    const response = await me(
      forge({ alg: 'HS256' }, { user_id: 'configured-admin', username: 'cfg', exp: inAnHour() }),
    );
    expect(response.body.is_admin).toBe(true);
  });

  describe('publishers', () => {
    it('registers a publisher (201, unverified) and reports it from /auth/me and /auth/publisher', async () => {
      const client = registry.as({ id: 'u-pub', username: 'pubber' });
      const created = await client.post('/api/v1/auth/register-publisher', {
        name: 'Acme',
        display_name: 'Acme Inc',
        email: 'acme@example.com',
        homepage: 'https://acme.example',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: 'Acme',
        display_name: 'Acme Inc',
        verification_status: 'unverified',
        email: 'acme@example.com',
        homepage: 'https://acme.example',
      });
      const meResponse = await client.get('/api/v1/auth/me');
      expect(meResponse.body.publisher_id).toBe(created.body.id);
      const own = await client.get('/api/v1/auth/publisher');
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({
        id: created.body.id,
        name: 'Acme',
        verification_status: 'unverified',
        package_count: 0,
        total_downloads: 0,
      });
    });

    it('answers 404 from /auth/publisher for a user without one', async () => {
      const response = await registry.as({ id: 'u-nopub', username: 'np' }).get('/api/v1/auth/publisher');
      expect(response.status).toBe(404);
    });

    it('refuses a taken name compared case-insensitively with 409', async () => {
      await publisherFactory(registry, 'TakenName');
      const response = await registry
        .as({ id: 'u-late', username: 'late' })
        .post('/api/v1/auth/register-publisher', { name: 'takenname' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('CONFLICT');
    });

    it('refuses a second publisher for the same user with 409', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/auth/register-publisher', { name: 'second-one' });
      expect(response.status).toBe(409);
    });

    it.each([
      [{ name: '' }, 'name'],
      [{ name: 'ok-name', email: 'not-an-email' }, 'email'],
      [{ name: 'ok-name2', homepage: 'ftp://x' }, 'homepage'],
      [{ name: 'ok-name3', surprise: 1 }, 'surprise'],
    ])('rejects invalid fields %j with 422', async (body, field) => {
      const response = await registry
        .as({ id: `u-invalid-${field}`, username: 'inv' })
        .post('/api/v1/auth/register-publisher', body);
      expect(response.status).toBe(422);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });
});
