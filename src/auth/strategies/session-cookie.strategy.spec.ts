import { MemoryAuthStore } from '../shared-store/auth-store.js';
import { requestWith, sessionCookies, SPEC_SECRET } from '../../../test/support/auth-fixtures.js';
import { SessionToken } from '../session-cookie/session-token.js';
import { SessionCookieStrategy } from './session-cookie.strategy.js';

const user = { userId: 'u-42', username: 'ada', level: 2, email: 'ada@example.com' };

describe('SessionCookieStrategy', () => {
  const store = new MemoryAuthStore();
  const sessions = sessionCookies(store, { secure: false });
  const strategy = new SessionCookieStrategy(sessions);
  const withCookie = (token: string) =>
    requestWith({ cookie: `theme=dark; tb_session=${encodeURIComponent(token)}; other=1` });

  it('turns a good cookie into a session-cookie principal', async () => {
    const issued = sessions.issue(user);
    const principal = await strategy.authenticate(withCookie(issued.token));
    expect(principal).toMatchObject({
      platformUserId: 'u-42',
      username: 'ada',
      level: 2,
      email: 'ada@example.com',
      strategy: 'session-cookie',
      sessionId: issued.sessionId,
      expiresAt: issued.expiresAt,
    });
  });

  it('returns null when the request has no session cookie', async () => {
    expect(await strategy.authenticate(requestWith({ cookie: 'theme=dark' }))).toBeNull();
    expect(await strategy.authenticate(requestWith({}))).toBeNull();
  });

  it('rejects a cookie whose payload was changed (level raised to admin)', async () => {
    const [body, mac] = sessions.issue(user).token.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...payload, level: -1 })).toString('base64url')}.${mac}`;
    await expect(strategy.authenticate(withCookie(forged))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('signature'),
    });
  });

  it('rejects a cookie whose signature was changed', async () => {
    const token = sessions.issue(user).token;
    const at = token.length - 10;
    const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    await expect(strategy.authenticate(withCookie(tampered))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('signature'),
    });
  });

  it('rejects another spelling of the same signature bytes (base64 spare bits in the last character)', async () => {
    const token = sessions.issue(user).token;
    const last = token.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last of 43 characters carries 4 bits; flipping its lowest bit keeps the decoded bytes.
    const sibling = alphabet[alphabet.indexOf(last) ^ 1];
    expect(Buffer.from(token.slice(token.indexOf('.') + 1, -1) + sibling, 'base64url')).toEqual(
      Buffer.from(token.slice(token.indexOf('.') + 1), 'base64url'),
    );
    await expect(strategy.authenticate(withCookie(token.slice(0, -1) + sibling))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('rejects a cookie signed with another secret', async () => {
    const other = sessionCookies(new MemoryAuthStore(), { secret: 'another-secret-another-secret' });
    await expect(strategy.authenticate(withCookie(other.issue(user).token))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('rejects a cookie signed with the raw platform secret (cookies use a derived key)', async () => {
    const body = Buffer.from(
      JSON.stringify({
        user_id: 'u',
        session_id: 's',
        user_name: 'u',
        level: -1,
        email: null,
        iat: 0,
        exp: 4102444800,
      }),
    ).toString('base64url');
    const { createHmac } = await import('node:crypto');
    const forged = `${body}.${createHmac('sha256', SPEC_SECRET).update(body).digest('base64url')}`;
    await expect(strategy.authenticate(withCookie(forged))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('rejects an expired session', async () => {
    const issued = sessions.issue(user, Math.floor(Date.now() / 1000) - 8 * 24 * 3600);
    await expect(strategy.authenticate(withCookie(issued.token))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: session expired',
    });
  });

  it('rejects a session that never expires (exp 0, the original cookie)', async () => {
    const token = new SessionToken(SPEC_SECRET).sign({
      user_id: 'u',
      session_id: 's',
      user_name: 'u',
      level: 1,
      email: null,
      iat: 0,
      exp: 0,
    });
    // Signed the way the service signs (same secret, same derived key): only the missing expiry is wrong.
    await expect(strategy.authenticate(withCookie(token))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('no expiry'),
    });
  });

  it('rejects a session after logout (denylisted), and only that session', async () => {
    const ended = sessions.issue(user);
    const other = sessions.issue(user);
    const principal = await strategy.authenticate(withCookie(ended.token));
    await sessions.revoke(principal!);
    await expect(strategy.authenticate(withCookie(ended.token))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: session ended (logged out)',
    });
    expect((await strategy.authenticate(withCookie(other.token)))?.sessionId).toBe(other.sessionId);
  });

  it('keeps the denylist entry exactly as long as the session would have lived', async () => {
    const issued = sessions.issue(user);
    const calls: Array<[string, number]> = [];
    const counting = new (class extends MemoryAuthStore {
      override put(key: string, value: string, ttlMs: number) {
        calls.push([key, ttlMs]);
        return super.put(key, value, ttlMs);
      }
    })();
    await sessionCookies(counting).revoke(
      { sessionId: issued.sessionId, expiresAt: issued.expiresAt },
      (issued.expiresAt - 100) * 1000,
    );
    expect(calls).toEqual([[`revoked:session:${issued.sessionId}`, 100_000]]);
  });

  it('sets an HttpOnly, SameSite=Lax cookie with the session lifetime, and clears it on logout', () => {
    expect(sessionCookies().issue(user).setCookie).toMatch(
      /^tb_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect(sessions.clearCookie()).toBe('tb_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax');
  });

  it('ends the sessions of a user issued before a level change, not later ones or other users', async () => {
    const now = Math.floor(Date.now() / 1000);
    const before = sessions.issue({ ...user, userId: 'demoted' }, now - 10);
    const otherUser = sessions.issue({ ...user, userId: 'someone-else' }, now - 10);
    await sessions.revokeUser('demoted');
    await expect(strategy.authenticate(withCookie(before.token))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: session ended (account changed)',
    });
    expect((await strategy.authenticate(withCookie(otherUser.token)))?.platformUserId).toBe('someone-else');
    const later = sessions.issue({ ...user, userId: 'demoted' }, now + 2);
    expect((await strategy.authenticate(withCookie(later.token)))?.platformUserId).toBe('demoted');
  });
});
