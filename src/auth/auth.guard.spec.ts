import type { ExecutionContext } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { Reflector } from '@nestjs/core';
import { MemoryAuthStore } from './shared-store/auth-store.js';
import {
  apiKeysInMemory,
  forgeJwt,
  inAnHour,
  sessionCookies,
  jwtBearerStrategy,
} from '../../test/support/auth-fixtures.js';
import { ACCESS_LEVEL } from './access-level.js';
import { Authenticated, Public, RequireLevel, RequirePermission } from './access.decorators.js';
import type { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuthGuard } from './auth.guard.js';
import type { AuthenticatedRequest, AuthStrategy } from './principal.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
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

function call(guard: AuthGuard, route: keyof Routes, headers: Record<string, string> = {}) {
  const request = { headers } as AuthenticatedRequest & { headers: Record<string, string> };
  const context = {
    getType: () => 'http',
    getHandler: () => Routes.prototype[route],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
  return guard.canActivate(context).then(() => request);
}

describe('AuthGuard with several strategies', () => {
  let keys: ApiKeysService;
  let close: () => Promise<void>;
  const sessions = sessionCookies(new MemoryAuthStore());
  let guard: AuthGuard;
  let jwtOnly: AuthGuard;
  let keysOnly: AuthGuard;
  const jwt = (claims: Record<string, unknown> = {}) =>
    `Bearer ${forgeJwt({ sub: 'jwt-user', username: 'jay', exp: inAnHour(), ...claims })}`;
  const cookie = (level: number) =>
    `tb_session=${sessions.issue({ userId: 'cookie-user', username: 'cleo', level }).token}`;

  beforeAll(async () => {
    ({ keys, close } = await apiKeysInMemory());
    const build = (strategies: AuthStrategy[]) => {
      const built = new AuthGuard(new Reflector(), strategies, noUsers);
      built.onModuleInit();
      return built;
    };
    const apiKey = new ApiKeyStrategy(keys);
    const bearer = jwtBearerStrategy();
    guard = build([apiKey, bearer, new SessionCookieStrategy(sessions)]);
    jwtOnly = build([bearer]);
    keysOnly = build([apiKey]);
  });

  afterAll(() => close());

  it('identifies a JWT caller by the jwt strategy', async () => {
    expect((await call(guard, 'loggedIn', { authorization: jwt() })).principal).toMatchObject({
      strategy: 'jwt',
      platformUserId: 'jwt-user',
    });
  });

  it('identifies an API key sent as a bearer token by the api-key strategy', async () => {
    const { key } = await keys.create({ owner: 'key-owner', name: 'bearer' });
    expect((await call(guard, 'loggedIn', { authorization: `Bearer ${key}` })).principal).toMatchObject({
      strategy: 'api-key',
      platformUserId: 'key-owner',
    });
  });

  it('identifies a session cookie when no header credential is sent', async () => {
    expect((await call(guard, 'loggedIn', { cookie: cookie(1) })).principal).toMatchObject({
      strategy: 'session-cookie',
      platformUserId: 'cookie-user',
    });
  });

  it('lets the first configured strategy decide when several credentials are sent', async () => {
    const { key } = await keys.create({ owner: 'key-owner', name: 'first' });
    expect(
      (await call(guard, 'loggedIn', { 'x-api-key': key, authorization: jwt(), cookie: cookie(1) })).principal
        ?.strategy,
    ).toBe('api-key');
  });

  it('refuses a protected route without a credential, naming every accepted way', async () => {
    await expect(call(guard, 'loggedIn')).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message:
        'Authentication required: send X-API-Key: <key> (or Authorization: Bearer <key>) or Authorization: Bearer <token> or the session cookie',
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

  it('refuses an API key sent to a service without the api-key strategy', async () => {
    const { key } = await keys.create({ owner: 'key-owner', name: 'elsewhere' });
    await expect(call(jwtOnly, 'open', { authorization: `Bearer ${key}` })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('jwt credentials only'),
    });
  });

  it('refuses a JWT sent to a service that takes API keys only', async () => {
    await expect(call(keysOnly, 'open', { authorization: jwt() })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('api-key credentials only'),
    });
  });

  it('refuses @RequirePermission to a key without the permission, naming the need', async () => {
    const { key } = await keys.create({ owner: 'key-owner', name: 'reader', permissions: ['read'] });
    await expect(call(guard, 'execute', { 'x-api-key': key })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Permission "execute" required (this credential has: read)',
    });
  });

  it('admits @RequirePermission to a key with the permission or with admin', async () => {
    const executor = await keys.create({ owner: 'key-owner', name: 'executor', permissions: ['execute'] });
    const admin = await keys.create({ owner: 'key-owner', name: 'admin-key', permissions: ['admin'] });
    expect((await call(guard, 'execute', { 'x-api-key': executor.key })).principal?.apiKeyName).toBe('executor');
    expect((await call(guard, 'execute', { 'x-api-key': admin.key })).principal?.apiKeyName).toBe('admin-key');
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
