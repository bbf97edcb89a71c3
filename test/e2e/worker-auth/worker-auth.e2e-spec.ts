import { request as httpRequest } from 'node:http';
import { JwtService } from '@nestjs/jwt';
import { UsersService } from '../../../src/modules/worker-auth/index.js';
import { startFakeOAuthProvider, type FakeOAuthProvider } from '../../fixtures/fake-oauth-provider.js';
import {
  bridgeSessionIn,
  magicLinkIn,
  magicLinkLogin,
  startSmtpSink,
  type SmtpSink,
} from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

const APP_ORIGIN = 'https://app.example.test';

interface Bundle {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
}

function claimsOf(token: string): Record<string, unknown> {
  return new JwtService({}).verify(token, { secret: TEST_SECRET, algorithms: ['HS256'] });
}

/** The tokens the token-bridge page hands to the web client. */

function sessionCookieOf(response: Response): string {
  const header = response.headers.get('set-cookie') ?? '';
  const match = /tb_session=([^;]+)/.exec(header);
  if (!match) throw new Error(`no tb_session cookie in "${header}"`);
  return `tb_session=${match[1]}`;
}

describe.each(backends())('WorkerAuth on $name', (backend) => {
  let worker: HttpWorkerUnderTest;
  let smtp: SmtpSink;
  let provider: FakeOAuthProvider;
  let users: UsersService;
  let emailCounter = 0;
  const freshEmail = (label: string) => `${label}-${++emailCounter}-${Date.now().toString(36)}@example.test`;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${worker.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
    });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${worker.baseUrl}${path}`, { headers, redirect: 'manual' });

  /** The whole magic-link login, as a person with a mail client does it. */
  async function magicLogin(email: string): Promise<{ bundle: Bundle; cookie: string; userId: string }> {
    const { answer: response, session: bridge } = await magicLinkLogin(worker.baseUrl, smtp, email);
    return {
      bundle: { access_token: bridge.token, refresh_token: bridge.refreshToken, expires_in: 900, token_type: 'Bearer' },
      cookie: sessionCookieOf(response),
      userId: bridge.userId,
    };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    provider = await startFakeOAuthProvider();
    const oauth = (prefix: string) => ({
      [`${prefix}_CLIENT_ID`]: provider.clientId,
      [`${prefix}_CLIENT_SECRET`]: provider.clientSecret,
      [`${prefix}_AUTHORIZE_URL`]: `${provider.baseUrl}/authorize`,
      [`${prefix}_TOKEN_URL`]: `${provider.baseUrl}/token`,
      [`${prefix}_USERINFO_URL`]: `${provider.baseUrl}/userinfo`,
    });
    worker = await startHttpWorker(backend, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Toolbox <login@example.test>',
      MAGIC_LINK_PER_EMAIL_PER_HOUR: '3',
      // As behind the manager's nginx: the per-IP limit counts the forwarded client address.
      TRUST_PROXY: 'loopback',
      OAUTH_ALLOWED_REDIRECT_ORIGINS: APP_ORIGIN,
      ...oauth('DISCORD'),
      ...oauth('GOOGLE'),
    });
    users = worker.app.get(UsersService);
  });

  afterAll(async () => {
    await worker?.close();
    await smtp?.close();
    await provider?.close();
  });

  describe('magic link', () => {
    it('mails a link whose GET only shows a confirm page; the POST logs in once and answers the token bridge', async () => {
      const email = freshEmail('Magic');
      expect((await post('/auth/magic/request', { email })).status).toBe(202);
      const mail = await smtp.next(email);
      expect(mail.from).toBe('login@example.test');
      const link = magicLinkIn(mail);
      expect(link.startsWith(`${worker.baseUrl}/auth/magic/verify?token=`)).toBe(true);
      const token = new URL(link).searchParams.get('token')!;

      // A mail scanner fetching the link twice uses nothing up.
      for (let i = 0; i < 2; i += 1) {
        const page = await fetch(link);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/text\/html/);
        const html = await page.text();
        expect(html).toContain('<form method="post" action="/auth/magic/verify">');
        expect(html).toContain(`value="${token}"`);
        expect(page.headers.get('set-cookie')).toBeNull();
      }

      const confirm = () =>
        fetch(`${worker.baseUrl}/auth/magic/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
      const answer = await confirm();
      expect(answer.status).toBe(200);
      expect(answer.headers.get('set-cookie')).toMatch(
        /^tb_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
      );
      const bridge = bridgeSessionIn(await answer.text());
      expect(bridge.userId).toMatch(/^usr_[0-9a-f]{24}$/);
      const claims = claimsOf(bridge.token);
      expect(claims).toMatchObject({
        sub: bridge.userId,
        user_id: bridge.userId,
        username: email.split('@')[0],
        email,
        level: 1,
        provider: 'magic_link',
        type: 'access',
      });
      expect(claims.jti).toEqual(expect.any(String));
      expect((claims.exp as number) - (claims.iat as number)).toBe(900);
      const refresh = claimsOf(bridge.refreshToken);
      expect(refresh).toMatchObject({ sub: bridge.userId, type: 'refresh' });
      expect((refresh.exp as number) - (refresh.iat as number)).toBe(7 * 24 * 3600);

      // Single use: the second POST and a later GET find the link used.
      const again = await confirm();
      expect(again.status).toBe(401);
      expect(await again.text()).toContain('expired or was already used');
      expect((await fetch(link)).status).toBe(410);
    });

    it('logs into the existing account of the e-mail whatever its case, and creates none twice', async () => {
      const email = freshEmail('case');
      const existing = await users.create({ email, username: 'casey' });
      const login = await magicLogin(email.toUpperCase().replace('@EXAMPLE.TEST', '@example.test'));
      expect(login.userId).toBe(existing.id);
      expect(claimsOf(login.bundle.access_token)).toMatchObject({ username: 'casey' });
    });

    it('answers the same 202 for any address and limits requests per e-mail', async () => {
      const email = freshEmail('limited');
      for (let i = 0; i < 3; i += 1) {
        const response = await post('/auth/magic/request', { email });
        expect(response.status).toBe(202);
        expect(await response.json()).toEqual({
          status: 'accepted',
          message: 'If the address can receive mail, a sign-in link is on its way.',
        });
      }
      const limited = await post('/auth/magic/request', { email });
      expect(limited.status).toBe(429);
      expect(((await limited.json()) as any).info.exec_code).toBe(429);
      // Another address from the same client is still served.
      expect((await post('/auth/magic/request', { email: freshEmail('other') })).status).toBe(202);
    });

    it('limits requests per client IP (30 an hour by default), whatever the addresses', async () => {
      const from = { 'x-forwarded-for': '203.0.113.7' };
      for (let i = 0; i < 30; i += 1)
        expect((await post('/auth/magic/request', { email: freshEmail('ip') }, from)).status).toBe(202);
      expect((await post('/auth/magic/request', { email: freshEmail('ip') }, from)).status).toBe(429);
      // Another client is still served.
      const other = { 'x-forwarded-for': '203.0.113.8' };
      expect((await post('/auth/magic/request', { email: freshEmail('ip') }, other)).status).toBe(202);
    });

    it('never mails a link to the Host a request names, unless it is loopback (no link poisoning)', async () => {
      const email = freshEmail('poison');
      // fetch will not send another Host: a raw request does, as a client behind a lax proxy could.
      const poisoned = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const target = new URL('/auth/magic/request', worker.baseUrl);
        const call = httpRequest(
          target,
          { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' } },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        call.on('error', reject);
        call.end(JSON.stringify({ email }));
      });
      expect(poisoned.status).toBe(503);
      expect(JSON.parse(poisoned.body).info.help_text).toContain('WORKER_PUBLIC_BASE_URL');
      expect(smtp.mails.some((mail) => mail.to.includes(email))).toBe(false);
    });

    it('refuses a request without a valid e-mail (400) and a verify without a token (400)', async () => {
      expect((await post('/auth/magic/request', { email: 'not-an-email' })).status).toBe(400);
      expect((await post('/auth/magic/request', {})).status).toBe(400);
      expect((await get('/auth/magic/verify')).status).toBe(400);
    });
  });

  describe('sessions and tokens', () => {
    it('POST /validateSession turns an access token into a tb_session cookie with the envelope', async () => {
      const { bundle, userId } = await magicLogin(freshEmail('validate'));
      for (const body of [
        { session_token: bundle.access_token },
        { token: bundle.access_token },
        { Jwt_claim: bundle.access_token },
      ]) {
        const response = await post('/validateSession', body);
        expect(response.status).toBe(200);
        expect(response.headers.get('set-cookie')).toMatch(
          /^tb_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
        );
        const envelope = await response.json();
        expect(envelope).toMatchObject({
          error: 'none',
          result: {
            data_to: 'API',
            data_info: 'Valid Session',
            data: { authenticated: true, session_id: expect.any(String), user_id: userId, level: 1 },
          },
          info: { exec_code: 0, help_text: 'Valid Session' },
        });
      }
      const byBearer = await post('/validateSession', {}, { authorization: `Bearer ${bundle.access_token}` });
      expect(byBearer.status).toBe(200);
      const cookie = sessionCookieOf(byBearer);

      const valid = await get('/IsValidSession', { cookie });
      expect(valid.status).toBe(200);
      expect(await valid.json()).toMatchObject({
        error: 'none',
        result: { data_to: 'API', data_info: 'Valid Session', data: null, data_type: null },
        info: { exec_code: 0, help_text: 'Valid Session' },
      });
      expect((await get('/IsValidSession', { authorization: `Bearer ${bundle.access_token}` })).status).toBe(200);
    });

    it('refuses /validateSession without a token, with a forged one and with a refresh token (401)', async () => {
      const { bundle } = await magicLogin(freshEmail('refused'));
      expect((await post('/validateSession', {})).status).toBe(401);
      expect((await post('/validateSession', { token: 'not.a.jwt' })).status).toBe(401);
      const forged = new JwtService({}).sign(
        { sub: 'usr_000000000000000000000000', type: 'access', level: -1 },
        { secret: 'another-secret-another-secret-0000', expiresIn: 60 },
      );
      expect((await post('/validateSession', { token: forged })).status).toBe(401);
      expect((await post('/validateSession', { token: bundle.refresh_token })).status).toBe(401);
      expect((await get('/IsValidSession')).status).toBe(401);
      expect((await get('/IsValidSession', { cookie: 'tb_session=forged.value' })).status).toBe(401);
    });

    it('GET /api_user_data answers the user record (no secrets), 401 without a session', async () => {
      const email = freshEmail('record');
      const { cookie, userId } = await magicLogin(email);
      const response = await get('/api_user_data', { cookie });
      expect(response.status).toBe(200);
      const body = (await response.json()) as any;
      expect(body).toMatchObject({
        error: 'none',
        result: {
          data_info: 'User data retrieved',
          data_type: 'json',
          data: { user_id: userId, email, level: 1, providers: [], created_at: expect.any(String) },
        },
        info: { exec_code: 0, help_text: 'Success' },
      });
      expect(body.result.data.last_login_at).toEqual(expect.any(String));
      expect(JSON.stringify(body)).not.toMatch(/access_token|refresh_token|secret/);
      expect((await get('/api_user_data')).status).toBe(401);
    });

    it('a level change ends the cookie sessions issued before it; a new login gets the new level', async () => {
      const { bundle, cookie, userId } = await magicLogin(freshEmail('promoted'));
      expect((await get('/IsValidSession', { cookie })).status).toBe(200);
      await users.setLevel(userId, 2);
      expect((await get('/IsValidSession', { cookie })).status).toBe(401);
      const again = await magicLogin((await users.findById(userId))!.email);
      expect(claimsOf(again.bundle.access_token)).toMatchObject({ sub: userId, level: 2 });
      expect((await get('/IsValidSession', { cookie: again.cookie })).status).toBe(200);
      // validateSession reads the level from the user record, not from the (older) token.
      const validated = await post('/validateSession', { token: bundle.access_token });
      expect(((await validated.json()) as any).result.data.level).toBe(2);
    });

    it('POST /auth/refresh rotates: a new bundle, and the used refresh token is refused', async () => {
      const { bundle, userId } = await magicLogin(freshEmail('refresh'));
      await users.setLevel(userId, 2);
      const first = await post('/auth/refresh', { refresh_token: bundle.refresh_token });
      expect(first.status).toBe(200);
      const rotated = (await first.json()) as Bundle;
      expect(rotated).toMatchObject({ expires_in: 900, token_type: 'Bearer' });
      expect(rotated.refresh_token).not.toBe(bundle.refresh_token);
      // The new access token carries the user's current level.
      expect(claimsOf(rotated.access_token)).toMatchObject({ sub: userId, level: 2, type: 'access' });
      expect((await post('/auth/refresh', { refresh_token: rotated.refresh_token })).status).toBe(200);
      expect((await post('/auth/refresh', { refresh_token: rotated.access_token })).status).toBe(401);
      expect((await post('/auth/refresh', {})).status).toBe(400);
      // The used token is refused (and its reuse ends the login: sessions-end.e2e-spec.ts).
      expect((await post('/auth/refresh', { refresh_token: bundle.refresh_token })).status).toBe(401);
    });

    it('POST /web/logoutS revokes the token and the cookie session, clears the cookie, 302 or JSON', async () => {
      const { bundle, cookie } = await magicLogin(freshEmail('logout'));
      const validated = sessionCookieOf(await post('/validateSession', { token: bundle.access_token }));
      expect((await get('/IsValidSession', { cookie: validated })).status).toBe(200);

      const json = await post(
        '/web/logoutS',
        { refresh_token: bundle.refresh_token },
        { authorization: `Bearer ${bundle.access_token}`, cookie: validated, accept: 'application/json' },
      );
      expect(json.status).toBe(200);
      expect(await json.json()).toEqual({ status: 'logged_out' });
      expect(json.headers.get('set-cookie')).toMatch(/^tb_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax/);

      expect((await get('/IsValidSession', { authorization: `Bearer ${bundle.access_token}` })).status).toBe(401);
      expect((await get('/IsValidSession', { cookie: validated })).status).toBe(401);
      expect((await post('/validateSession', { token: bundle.access_token })).status).toBe(401);
      expect((await post('/auth/refresh', { refresh_token: bundle.refresh_token })).status).toBe(401);
      // The bridge's own cookie belongs to the same login: the logout ended it too.
      expect((await get('/IsValidSession', { cookie })).status).toBe(401);
      const redirect = await post('/web/logoutS', {}, { cookie });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get('location')).toBe('/web/logout');
      expect((await get('/IsValidSession', { cookie })).status).toBe(401);
      // Logging out again is not an error.
      expect((await post('/web/logoutS', {}, { cookie })).status).toBe(302);
    });
  });

  describe('OAuth', () => {
    /** The browser's part: open the provider URL, follow its redirect to our callback. */
    async function authorize(name: 'discord' | 'google', redirectAfter?: string) {
      const query = redirectAfter ? `?redirect_after=${encodeURIComponent(redirectAfter)}` : '';
      const started = await get(`/auth/${name}/url${query}`);
      expect(started.status).toBe(200);
      const { auth_url, state } = (await started.json()) as { auth_url: string; state: string };
      // The browser keeps the cookie that binds the state to it, and sends it with the callback.
      const cookie = /tb_oauth_state=[^;]+/.exec(started.headers.get('set-cookie') ?? '')![0];
      const atProvider = await fetch(auth_url, { redirect: 'manual' });
      expect(atProvider.status).toBe(302);
      const callback = atProvider.headers.get('location')!;
      return { auth_url: new URL(auth_url), state, callback, cookie };
    }

    /** Opens the callback in the browser that started the flow. */
    const finish = (flow: { callback: string; cookie: string }) =>
      fetch(flow.callback, { headers: { cookie: flow.cookie } });

    it('Google: state + PKCE S256, creates the user from a verified profile, bridge to the allowed origin', async () => {
      const email = freshEmail('google');
      provider.loginAs({ sub: `g-${email}`, email, email_verified: true, name: 'Gina Google' });
      const flow = await authorize('google', `${APP_ORIGIN}/somewhere`);
      const { auth_url, state } = flow;
      expect(auth_url.searchParams.get('state')).toBe(state);
      expect(auth_url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(auth_url.searchParams.get('scope')).toBe('openid email profile');
      expect(auth_url.searchParams.get('redirect_uri')).toBe(`${worker.baseUrl}/auth/google/callback`);

      const answer = await finish(flow);
      expect(answer.status).toBe(200);
      const html = await answer.text();
      const bridge = bridgeSessionIn(html);
      expect(claimsOf(bridge.token)).toMatchObject({ email, username: 'Gina Google', provider: 'google' });
      expect(html).toContain(JSON.stringify(`${APP_ORIGIN}/web/assets/login.html#token=`).slice(0, -1));
      sessionCookieOf(answer);
      const verifier = provider.tokenRequests.at(-1)!.code_verifier;
      expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,}$/);

      // The state is single use.
      const replay = await finish(flow);
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain('Invalid or expired OAuth state');
    });

    it('Discord: links by provider id on the next login, not by a second account', async () => {
      const email = freshEmail('discord');
      provider.loginAs({ id: `d-${email}`, username: 'dora', email, verified: true });
      const first = bridgeSessionIn(await (await finish(await authorize('discord'))).text());
      const auth = (await authorize('discord')).auth_url;
      expect(auth.searchParams.get('code_challenge')).toBeNull();
      expect(auth.searchParams.get('scope')).toBe('identify email');
      // Same provider account, now with another e-mail: still the same user.
      provider.loginAs({ id: `d-${email}`, username: 'dora', email: freshEmail('changed'), verified: true });
      const second = bridgeSessionIn(await (await finish(await authorize('discord'))).text());
      expect(second.userId).toBe(first.userId);
      const record = await get('/api_user_data', { authorization: `Bearer ${second.token}` });
      expect(((await record.json()) as any).result.data.providers).toEqual([
        expect.objectContaining({ provider: 'discord', provider_user_id: `d-${email}` }),
      ]);
    });

    it('links to an existing e-mail only when the provider verified it', async () => {
      const email = freshEmail('takeover');
      const owner = await users.create({ email, username: 'owner' });
      provider.loginAs({ id: `attacker-${email}`, username: 'mallory', email, verified: false });
      const refused = await finish(await authorize('discord'));
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain('Sign-in failed');

      provider.loginAs({ sub: `g-owner-${email}`, email, email_verified: true, name: 'Owner' });
      const linked = bridgeSessionIn(await (await finish(await authorize('google'))).text());
      expect(linked.userId).toBe(owner.id);
    });

    it('refuses a redirect_after outside the allowed origins, a missing state or code, an unknown provider', async () => {
      expect((await get(`/auth/google/url?redirect_after=${encodeURIComponent('https://evil.example')}`)).status).toBe(
        400,
      );
      expect((await get('/auth/google/url?redirect_after=javascript:alert(1)')).status).toBe(400);
      const flow = await authorize('discord');
      const withoutState = new URL(flow.callback);
      withoutState.searchParams.delete('state');
      expect((await fetch(withoutState, { headers: { cookie: flow.cookie } })).status).toBe(400);
      expect((await get('/auth/discord/callback?state=abc')).status).toBe(400);
      expect((await get('/auth/github/url')).status).toBe(404);
    });

    it('a login declined at the provider answers the error page and uses the state up', async () => {
      const started = (await (await get('/auth/discord/url')).json()) as { state: string };
      const declined = await get(`/auth/discord/callback?error=access_denied&state=${started.state}`);
      expect(declined.status).toBe(401);
      expect(await declined.text()).toContain('discord login was not completed (access_denied)');
      const later = await get(`/auth/discord/callback?code=whatever&state=${started.state}`);
      expect(later.status).toBe(400);
    });

    it('escapes provider data in the bridge page (no script break-out)', async () => {
      const email = freshEmail('xss');
      provider.loginAs({ id: `x-${email}`, username: '</script><script>alert(1)</script>', email, verified: true });
      const html = await (await finish(await authorize('discord'))).text();
      expect(html).not.toContain('<script>alert(1)');
      expect(html.match(/<script>/g)).toHaveLength(1);
    });
  });
});
