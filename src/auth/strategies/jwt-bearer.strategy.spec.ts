import { forgeJwt, inAnHour, jwtBearerStrategy, requestWith } from '../../../test/support/auth-fixtures.js';
import { MemoryAuthStore } from '../shared-store/auth-store.js';
import { Revocations } from '../shared-store/revocations.js';

describe('JwtBearerStrategy', () => {
  const store = new MemoryAuthStore();
  const strategy = jwtBearerStrategy(store);
  const bearer = (token: string) => requestWith({ authorization: `Bearer ${token}` });

  it('turns a good token into a jwt principal with its level', async () => {
    const principal = await strategy.authenticate(
      bearer(forgeJwt({ user_id: 'u1', username: 'ada', level: 2, exp: inAnHour() })),
    );
    expect(principal).toMatchObject({
      platformUserId: 'u1',
      username: 'ada',
      level: 2,
      strategy: 'jwt',
      permissions: [],
      tokenSaysAdmin: false,
    });
  });

  it('counts a token without a level claim as LOGGED_IN', async () => {
    expect((await strategy.authenticate(bearer(forgeJwt({ sub: 'u2', exp: inAnHour() }))))?.level).toBe(1);
  });

  it('counts a level outside -1/0/1/2 as NOT_LOGGED_IN', async () => {
    expect((await strategy.authenticate(bearer(forgeJwt({ sub: 'u3', level: 7, exp: inAnHour() }))))?.level).toBe(0);
  });

  it('returns null when no Authorization header is sent', async () => {
    expect(await strategy.authenticate(requestWith({}))).toBeNull();
  });

  it('refuses any other bearer value (a key sent to a JWT service) as an invalid token', async () => {
    await expect(strategy.authenticate(bearer(`tb_mcp_${'a'.repeat(32)}`))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: invalid token',
    });
  });

  it('rejects a token signed with another secret', async () => {
    await expect(
      strategy.authenticate(bearer(forgeJwt({ sub: 'u4', exp: inAnHour() }, 'another-secret-another-secret'))),
    ).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: invalid token',
    });
  });

  it('rejects an expired token', async () => {
    await expect(
      strategy.authenticate(bearer(forgeJwt({ sub: 'u5', exp: Math.floor(Date.now() / 1000) - 10 }))),
    ).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: token expired',
    });
  });

  it('rejects a token without exp', async () => {
    await expect(strategy.authenticate(bearer(forgeJwt({ sub: 'u6' })))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('exp'),
    });
  });

  it('rejects an algorithm other than HS256', async () => {
    await expect(
      strategy.authenticate(bearer(forgeJwt({ sub: 'u7', exp: inAnHour() }, undefined, { alg: 'HS512' }))),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('rejects an Authorization header of another scheme', async () => {
    await expect(strategy.authenticate(requestWith({ authorization: 'Basic YTpi' }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('refuses a token whose jti was revoked, and only that token', async () => {
    const revoked = forgeJwt({ sub: 'u8', jti: 'jti-revoked', type: 'access', exp: inAnHour() });
    const kept = forgeJwt({ sub: 'u8', jti: 'jti-kept', type: 'access', exp: inAnHour() });
    expect(await strategy.authenticate(bearer(revoked))).toMatchObject({ tokenId: 'jti-revoked' });
    await new Revocations(store).revoke('token', 'jti-revoked', inAnHour());
    await expect(strategy.authenticate(bearer(revoked))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: token has been revoked',
    });
    expect(await strategy.authenticate(bearer(kept))).toMatchObject({ platformUserId: 'u8', tokenId: 'jti-kept' });
  });

  it('refuses a refresh token as a bearer credential', async () => {
    await expect(
      strategy.authenticate(bearer(forgeJwt({ sub: 'u9', type: 'refresh', jti: 'r1', exp: inAnHour() }))),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: 'Authentication failed: expected an access token' });
  });
});
