import type { ExecutionContext } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { Reflector } from '@nestjs/core';
import { MemoryAuthStore } from './shared-store/auth-store.js';
import { forgeJwt, inAnHour, sessionCookies, jwtBearerStrategy } from '../../test/support/auth-fixtures.js';
import { PlatformError } from '../common/errors.js';
import { ACCESS_LEVEL } from './access-level.js';
import { Authenticated, Public, RequireLevel, RequirePermission } from './access.decorators.js';
import { AuthGuard } from './auth.guard.js';
import type { AuthModuleOptions } from './auth.options.js';
import { Authenticator } from './authenticator.js';
import type { AuthenticatedRequest, AuthStrategy, CredentialRequest, Principal } from './principal.js';
import { Revocations } from './shared-store/revocations.js';
import { SessionCookieStrategy } from './strategies/session-cookie.strategy.js';

class Routes {
  open() {}
  @Public({ ignoreToken: true }) signed() {}
  loggedIn() {}
  @Authenticated({ admin: true }) admin() {}
  @RequirePermission('execute') execute() {}
  @RequireLevel(ACCESS_LEVEL.LOGGED_IN) member() {}
  @RequireLevel(ACCESS_LEVEL.TRUSTED) trusted() {}
  @RequireLevel(ACCESS_LEVEL.ADMIN) adminLevel() {}
}
Public()(Routes.prototype, 'open', Object.getOwnPropertyDescriptor(Routes.prototype, 'open')!);

const noUsers = {
  get: () => {
    throw new Error('no USER_RESOLVER');
  },
} as unknown as ModuleRef;

/** Keys with permissions, as the MCP transport's strategy yields them (`X-API-Key: <name>`; `bad` is refused). */
const keyStrategy: AuthStrategy = {
  name: 'mcp-key',
  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const name = request.headers['x-api-key'];
    if (typeof name !== 'string') return null;
    if (name === 'bad') throw new PlatformError('UNAUTHORIZED', 'Invalid or revoked MCP API key');
    const permissions = name.split('+');
    return {
      kind: 'key',
      subject: name,
      platformUserId: `mcp:${name}`,
      username: name,
      email: null,
      level: permissions.includes('admin') ? ACCESS_LEVEL.ADMIN : ACCESS_LEVEL.LOGGED_IN,
      tokenSaysAdmin: permissions.includes('admin'),
      permissions,
      strategy: 'mcp-key',
      apiKeyName: name,
    };
  },
};

function call(guard: AuthGuard, route: keyof Routes, headers: Record<string, string> = {}) {
  const request = { headers } as AuthenticatedRequest & { headers: Record<string, string> };
  const context = {
    getType: () => 'http',
    getHandler: () => Routes.prototype[route],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
  // As Nest's guard consumer does: a refusal thrown at once and a rejected promise both reject.
  return Promise.resolve()
    .then(() => guard.canActivate(context))
    .then(() => request);
}

describe('AuthGuard with several strategies', () => {
  const store = new MemoryAuthStore();
  const sessions = sessionCookies(store);
  const revocations = new Revocations(store);
  let guard: AuthGuard;
  let jwtOnly: AuthGuard;
  let keysOnly: AuthGuard;
  const jwt = (claims: Record<string, unknown> = {}) =>
    `Bearer ${forgeJwt({ sub: 'jwt-user', username: 'jay', exp: inAnHour(), ...claims })}`;
  const cookie = (level: number) =>
    `tb_session=${sessions.issue({ userId: 'cookie-user', username: 'cleo', level }).token}`;

  beforeAll(() => {
    const build = (strategies: AuthStrategy[], options: Omit<AuthModuleOptions, 'strategies'> = {}) => {
      const authenticator = Authenticator.of(strategies, options);
      const built = new AuthGuard(new Reflector(), authenticator, noUsers, {
        ...options,
        strategies: strategies.map((strategy) => strategy.name),
      });
      built.onModuleInit();
      return built;
    };
    const bearer = jwtBearerStrategy(store);
    guard = build([keyStrategy, bearer, new SessionCookieStrategy(sessions)]);
    jwtOnly = build([bearer]);
    keysOnly = build([keyStrategy], {
      messages: { credentialRequired: 'An MCP API key is required', adminRequired: 'Needs the admin key' },
    });
  });

  it('identifies a JWT caller by the jwt strategy', async () => {
    expect((await call(guard, 'loggedIn', { authorization: jwt() })).principal).toMatchObject({
      strategy: 'jwt',
      platformUserId: 'jwt-user',
    });
  });

  it('identifies a key by its strategy, with its permissions', async () => {
    expect((await call(guard, 'loggedIn', { 'x-api-key': 'read+execute' })).principal).toMatchObject({
      strategy: 'mcp-key',
      kind: 'key',
      subject: 'read+execute',
      permissions: ['read', 'execute'],
    });
  });

  it('identifies a session cookie when no header credential is sent', async () => {
    expect((await call(guard, 'loggedIn', { cookie: cookie(1) })).principal).toMatchObject({
      strategy: 'session-cookie',
      platformUserId: 'cookie-user',
    });
  });

  it('lets the first declared strategy decide when several good credentials are sent', async () => {
    expect(
      (await call(guard, 'loggedIn', { 'x-api-key': 'read', authorization: jwt(), cookie: cookie(1) })).principal
        ?.strategy,
    ).toBe('mcp-key');
  });

  it('refuses a bad bearer token even when a valid session cookie comes with it', async () => {
    await expect(
      call(guard, 'loggedIn', { authorization: 'Bearer not.a.token', cookie: cookie(1) }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'Authentication failed: invalid token' });
  });

  it('refuses a revoked bearer token even when a valid session cookie comes with it', async () => {
    const token = forgeJwt({ sub: 'jwt-user', jti: 'revoked-jti', exp: inAnHour() });
    await revocations.revoke('token', 'revoked-jti', inAnHour());
    await expect(
      call(guard, 'loggedIn', { authorization: `Bearer ${token}`, cookie: cookie(1) }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'Authentication failed: token has been revoked' });
  });

  it('refuses a bad session cookie even when a valid bearer token comes with it', async () => {
    await expect(
      call(guard, 'loggedIn', { authorization: jwt(), cookie: 'tb_session=garbage.signature' }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('refuses a bad key even when a valid bearer token comes with it', async () => {
    await expect(call(guard, 'loggedIn', { 'x-api-key': 'bad', authorization: jwt() })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Invalid or revoked MCP API key',
    });
  });

  it('refuses a protected route without a credential, naming every accepted way', async () => {
    await expect(call(guard, 'loggedIn')).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message:
        'Authentication required: send Authorization: Bearer tb_mcp_… (or X-API-Key) or Authorization: Bearer <token> or the session cookie',
    });
  });

  it('keeps the registry message for a JWT-only service', async () => {
    await expect(call(jwtOnly, 'loggedIn')).rejects.toMatchObject({
      message: 'Authentication required: send Authorization: Bearer <token>',
    });
  });

  it('lets an anonymous caller through a public route', async () => {
    expect((await call(guard, 'open')).principal).toBeUndefined();
  });

  it('refuses a bad cookie even on a public route', async () => {
    await expect(call(guard, 'open', { cookie: 'tb_session=garbage.signature' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('ignores every credential on a signed-URL route', async () => {
    expect(
      (await call(guard, 'signed', { authorization: 'Bearer not-a-token', cookie: 'tb_session=bad' })).principal,
    ).toBeUndefined();
  });

  it('refuses a key sent as a bearer token to a JWT-only service', async () => {
    await expect(call(jwtOnly, 'open', { authorization: `Bearer tb_mcp_${'0'.repeat(32)}` })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it("answers a missing credential and a missing admin with the service's own texts", async () => {
    await expect(call(keysOnly, 'loggedIn')).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'An MCP API key is required',
    });
    await expect(call(keysOnly, 'admin', { 'x-api-key': 'read' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Needs the admin key',
    });
  });

  it('refuses @RequirePermission to a key without the permission, naming the need', async () => {
    await expect(call(guard, 'execute', { 'x-api-key': 'read' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Permission "execute" required (this credential has: read)',
    });
  });

  it('admits @RequirePermission to a key with the permission or with admin', async () => {
    expect((await call(guard, 'execute', { 'x-api-key': 'execute' })).principal?.apiKeyName).toBe('execute');
    expect((await call(guard, 'execute', { 'x-api-key': 'admin' })).principal?.apiKeyName).toBe('admin');
  });

  it('refuses @RequirePermission to a non-admin JWT caller (permissions belong to keys)', async () => {
    await expect(call(guard, 'execute', { authorization: jwt() })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('refuses @RequireLevel(LOGGED_IN) to a NOT_LOGGED_IN token with 403 naming the level', async () => {
    await expect(call(guard, 'member', { authorization: jwt({ level: 0 }) })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Access level LOGGED_IN (1) required; the caller is NOT_LOGGED_IN (0)',
    });
  });

  it('refuses @RequireLevel(LOGGED_IN) to an anonymous caller with 401', async () => {
    await expect(call(guard, 'member')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('refuses @RequireLevel(TRUSTED) to a LOGGED_IN cookie and admits a TRUSTED one', async () => {
    await expect(call(guard, 'trusted', { cookie: cookie(1) })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await call(guard, 'trusted', { cookie: cookie(2) })).principal?.level).toBe(2);
  });

  it('admits an ADMIN (-1) caller to TRUSTED routes, the non-monotonic rule', async () => {
    expect((await call(guard, 'trusted', { cookie: cookie(-1) })).principal?.level).toBe(-1);
  });

  it('refuses @RequireLevel(ADMIN) to a TRUSTED caller', async () => {
    await expect(call(guard, 'adminLevel', { authorization: jwt({ level: 2 }) })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringContaining('ADMIN (-1) required'),
    });
  });

  it('refuses an admin route to a non-admin and admits an admin token', async () => {
    await expect(call(guard, 'admin', { authorization: jwt() })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Admin required',
    });
    expect((await call(guard, 'admin', { authorization: jwt({ level: -1 }) })).principal?.tokenSaysAdmin).toBe(true);
  });
});
