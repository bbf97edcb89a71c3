import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { ACCESS_LEVEL } from '../../../auth/access-level.js';
import { SessionCookies } from '../../../auth/session-cookie/session-cookies.js';
import { MemoryAuthStore } from '../../../auth/shared-store/auth-store.js';
import { Revocations } from '../../../auth/shared-store/revocations.js';
import { TokenVerifier } from '../../../auth/token-verifier.js';
import { loadConfig } from '../../../config/config.js';
import { MemoryCounterStore } from '../../../counters/counter-store.js';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { runAsCaller } from '../../app-core/caller.js';
import type { Result } from '../../app-core/index.js';
import { UserIdentityEntity } from '../entities/user-identity.entity.js';
import { UserEntity } from '../entities/user.entity.js';
import { MagicLinkService } from '../magic-link.service.js';
import { Mailer } from '../mailer.js';
import { TokensService } from '../tokens.service.js';
import { UsersService } from '../users.service.js';
import { CloudMAuthMod } from './cloudm-auth.mod.js';
import { DeviceInvitesService } from './device-invites.service.js';

const SECRET = 'cloudm-auth-spec-secret-of-enough-length';

/** Each function's refusals, called on the mod with real services over SQLite and the memory stores. */
describe('CloudMAuthMod refusals', () => {
  let dataSource: DataSource;
  let users: UsersService;
  let tokens: TokensService;
  let mod: CloudMAuthMod;
  let counter = 0;

  beforeAll(async () => {
    dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: ':memory:' }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    const config = loadConfig({
      PLATFORM_JWT_SECRET: SECRET,
      REFRESH_REUSE_GRACE_SECONDS: '0',
      USER_DATA_MAX_BYTES: '1024',
    });
    const store = new MemoryAuthStore();
    const counters = new MemoryCounterStore();
    const revocations = new Revocations(store);
    const sessions = new SessionCookies({ strategies: ['session-cookie', 'jwt'] }, config, revocations);
    const jwt = new JwtService({});
    users = new UsersService(
      dataSource.getRepository(UserEntity),
      dataSource.getRepository(UserIdentityEntity),
      revocations,
    );
    tokens = new TokensService(
      jwt,
      new TokenVerifier(jwt, config),
      revocations,
      sessions,
      users,
      store,
      config,
      config.workerAuth,
    );
    const magic = new MagicLinkService(store, counters, config.workerAuth, new Mailer(config.workerAuth), users);
    mod = new CloudMAuthMod(
      users,
      tokens,
      sessions,
      magic,
      new DeviceInvitesService(store, counters),
      config.workerAuth,
    );
  });
  afterAll(() => dataSource.destroy());

  async function newUser(level: number = ACCESS_LEVEL.LOGGED_IN) {
    const user = await users.create({ email: `spec-${++counter}@example.test`, level });
    const bundle = await tokens.issue(user, 'test');
    return { user, bundle };
  }

  /** Runs `body` as a signed-in HTTP caller of `userId` at `level`. */
  const as = <T>(userId: string | null, level: number, body: () => Promise<T>) =>
    runAsCaller({ userId, level, transport: 'http' }, body);

  function expectRefused(result: Result, status: number, message?: RegExp): void {
    expect(result.isError()).toBe(true);
    expect(result.info.exec_code).toBe(status);
    if (message) expect(result.info.help_text).toMatch(message);
  }

  describe('refresh_token', () => {
    it('refuses a missing token, an access token, a forged one and a reused one', async () => {
      const { bundle } = await newUser();
      expectRefused(await mod.refreshToken({}), 400, /Refresh token required/);
      expectRefused(await mod.refreshToken({ refresh_token: bundle.access_token }), 401, /Expected a refresh token/);
      expectRefused(await mod.refreshToken({ refresh_token: 'a.b.c' }), 401);
      const rotated = await mod.refreshToken({ refresh_token: bundle.refresh_token, token: bundle.access_token });
      expect(rotated.isError()).toBe(false);
      expectRefused(await mod.refreshToken({ refresh_token: bundle.refresh_token }), 401, /already used/);
    });

    it('refuses an expired refresh token', async () => {
      const { user } = await newUser();
      const expired = new JwtService({}).sign(
        { sub: user.id, type: 'refresh', jti: 'x', lid: 'y' },
        { secret: SECRET, algorithm: 'HS256', expiresIn: -10 },
      );
      expectRefused(await mod.refreshToken({ refresh_token: expired }), 401, /expired/);
    });
  });

  describe('validate_session', () => {
    it('refuses a missing, forged, revoked or refresh token', async () => {
      const { bundle } = await newUser();
      expectRefused(await mod.validateSession({}), 401, /No token provided/);
      expectRefused(await mod.validateSession({ token: 'a.b.c' }), 401);
      expectRefused(await mod.verifySessionToken({ session_token: bundle.refresh_token }), 401);
      await mod.logout({ token: bundle.access_token });
      expectRefused(await mod.validateSession({ Jwt_claim: bundle.access_token }), 401);
    });
  });

  describe('get_user_data', () => {
    it("refuses another user's record and a caller without a user", async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      expectRefused(await as(alice.user.id, 1, () => mod.getUserData({ user_id: bob.user.id })), 403, /own/);
      expectRefused(await as(null, 0, () => mod.getUserData({})), 401);
    });
  });

  describe('update_user_data', () => {
    it('refuses level, email, a foreign record, non-objects and oversized data, and stores nothing', async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      const update = (kwargs: Parameters<CloudMAuthMod['updateUserData']>[0]) =>
        as(alice.user.id, 1, () => mod.updateUserData(kwargs));
      expectRefused(await update({ level: ACCESS_LEVEL.ADMIN, settings: { a: 1 } }), 403, /level/);
      expectRefused(await update({ email: 'x@example.test' }), 403, /email/);
      expectRefused(await update({ user_id: bob.user.id, settings: { a: 1 } }), 403);
      expectRefused(await update({ mod_data: 'text' }), 400, /mod_data must be a JSON object/);
      expectRefused(await update({ settings: { blob: 'x'.repeat(2000) } }), 413);
      expectRefused(await update({ username: '<script>' }), 400);
      const stored = (await users.findById(alice.user.id))!;
      expect({ level: stored.level, settings: stored.settings, username: stored.username }).toEqual({
        level: 1,
        settings: null,
        username: alice.user.username,
      });
    });
  });

  describe('create_device_invite and verify_device_invite', () => {
    it('refuses an invite for another account, a used, malformed or unknown code, and limits wrong codes', async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      expectRefused(await as(alice.user.id, 1, () => mod.createDeviceInvite({ user_id: bob.user.id })), 403);
      const invite = await as(alice.user.id, 1, () => mod.createDeviceInvite({}));
      const { code } = invite.get() as { code: string };
      const request = { headers: {}, client_ip: '203.0.113.9' };
      expectRefused(await mod.verifyDeviceInvite({ request }), 400, /Invite code required/);
      expect((await mod.verifyDeviceInvite({ code, request })).isError()).toBe(false);
      expectRefused(await mod.verifyDeviceInvite({ code, request }), 401, /Invalid or expired/);
      for (const wrong of ['12ab56', '999999', '000000', '123456'])
        await mod.verifyDeviceInvite({ code: wrong, request });
      const fresh = (await as(alice.user.id, 1, () => mod.createDeviceInvite({}))).get() as { code: string };
      expectRefused(await mod.verifyDeviceInvite({ code: fresh.code, request }), 429, /Too many wrong invite codes/);
      // Another address is not affected by this one's wrong codes.
      const other = await mod.verifyDeviceInvite({
        code: fresh.code,
        request: { headers: {}, client_ip: '198.51.100.1' },
      });
      expect(other.isError()).toBe(false);
    });
  });

  describe('magic links', () => {
    it('refuses a malformed e-mail, and a missing or unknown link', async () => {
      const request = { headers: { host: '127.0.0.1:1' }, client_ip: '203.0.113.10' };
      expectRefused(await mod.requestMagicLink({ email: 'x<victim@example.test>', request }), 400);
      expectRefused(await mod.verifyMagicLink({}), 400, /Token required/);
      expectRefused(await mod.verifyMagicLink({ token: 'unknown' }), 401);
    });

    it('refuses a status check without a poll id, for an unknown one, and past 30 a minute', async () => {
      expectRefused(await mod.checkMagicLinkStatus({}), 400, /poll_id required/);
      expectRefused(await mod.checkMagicLinkStatus({ poll_id: 'unknown' }), 404);
      for (let i = 0; i < 29; i += 1) await mod.checkMagicLinkStatus({ poll_id: 'unknown' });
      expectRefused(await mod.checkMagicLinkStatus({ poll_id: 'unknown' }), 429);
    });
  });

  describe('logout', () => {
    it('ends the login of the token given and clears the cookie, and a second logout is no error', async () => {
      const { bundle } = await newUser();
      const first = await mod.logout({ token: bundle.access_token });
      expect(first.get()).toEqual({ logged_out: true });
      expect(first.httpHeaders).toEqual([['Set-Cookie', expect.stringMatching(/^tb_session=;.*Max-Age=0/)]]);
      expectRefused(await mod.refreshToken({ refresh_token: bundle.refresh_token }), 401);
      expect((await mod.logout({ token: bundle.access_token })).isError()).toBe(false);
    });
  });
});
