import { startFakeOAuthProvider, type FakeOAuthProvider } from '../../fixtures/fake-oauth-provider.js';
import { magicLinkIn, magicLinkLogin, startSmtpSink, type SmtpSink } from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

interface Bundle {
  access_token: string;
  refresh_token: string;
}

/** The Result envelope's error code of a refused request (the worker's error format). */
async function errorCodeOf(response: Response): Promise<string> {
  return ((await response.json()) as { result: { data: { code: string } } }).result.data.code;
}

function sessionCookieOf(response: Response): string {
  const match = /tb_session=([^;]+)/.exec(response.headers.get('set-cookie') ?? '');
  if (!match) throw new Error(`no tb_session cookie in "${response.headers.get('set-cookie')}"`);
  return `tb_session=${match[1]}`;
}

/**
 * Sessions that end: a logout ends the whole login (access tokens, refresh family, cookies), a reused refresh
 * token ends its family, cookies exchanged for a token end with its login, the token bridge keeps tokens out of
 * URLs servers see, OAuth state is bound to the browser, magic links go to bare addresses only, and forwarded
 * headers count only behind a configured proxy (this worker has no TRUST_PROXY).
 */
describe.each(backends())('Sessions that end on $name', (backend) => {
  let worker: HttpWorkerUnderTest;
  let smtp: SmtpSink;
  let provider: FakeOAuthProvider;
  let counter = 0;
  const freshEmail = (label: string) => `${label}-${++counter}-${Date.now().toString(36)}@example.test`;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${worker.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
    });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${worker.baseUrl}${path}`, { headers, redirect: 'manual' });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** A magic-link login: its bundle, its bridge cookie and the bridge page. */
  async function login(email = freshEmail('login')): Promise<{ bundle: Bundle; cookie: string; html: string }> {
    const { answer, html, session } = await magicLinkLogin(worker.baseUrl, smtp, email);
    return {
      bundle: { access_token: session.token, refresh_token: session.refreshToken },
      cookie: sessionCookieOf(answer),
      html,
    };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    provider = await startFakeOAuthProvider();
    worker = await startHttpWorker(backend, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Toolbox <login@example.test>',
      MAGIC_LINK_PER_EMAIL_PER_HOUR: '3',
      // Strict rotation: a rotated-away token is reuse at once (the tabs' grace window has its own suite, cloudm-auth).
      REFRESH_REUSE_GRACE_SECONDS: '0',
      DISCORD_CLIENT_ID: provider.clientId,
      DISCORD_CLIENT_SECRET: provider.clientSecret,
      DISCORD_AUTHORIZE_URL: `${provider.baseUrl}/authorize`,
      DISCORD_TOKEN_URL: `${provider.baseUrl}/token`,
      DISCORD_USERINFO_URL: `${provider.baseUrl}/userinfo`,
    });
  });

  afterAll(async () => {
    await worker?.close();
    await smtp?.close();
    await provider?.close();
  });

  describe('logout', () => {
    it('refuses the refresh token of a login after a logout with its access token', async () => {
      const { bundle } = await login();
      expect((await post('/web/logoutS', {}, bearer(bundle.access_token))).status).toBe(200);
      const refreshed = await post('/auth/refresh', { refresh_token: bundle.refresh_token });
      expect(refreshed.status).toBe(401);
      expect(await errorCodeOf(refreshed)).toBe('UNAUTHORIZED');
    });

    it('refuses the access token of a login after a logout with only its cookie', async () => {
      const { bundle, cookie } = await login();
      expect((await post('/web/logoutS', {}, { cookie })).status).toBe(200);
      const answer = await get('/IsValidSession', bearer(bundle.access_token));
      expect(answer.status).toBe(401);
      expect(await errorCodeOf(answer)).toBe('UNAUTHORIZED');
    });

    it('refuses the refresh token of a login after a logout with only its cookie', async () => {
      const { bundle, cookie } = await login();
      expect((await post('/web/logoutS', {}, { cookie })).status).toBe(200);
      const refreshed = await post('/auth/refresh', { refresh_token: bundle.refresh_token });
      expect(refreshed.status).toBe(401);
      expect(await errorCodeOf(refreshed)).toBe('UNAUTHORIZED');
    });
  });

  describe('refresh-token rotation', () => {
    it('refuses the successor refresh token once a rotated-away one is presented again', async () => {
      const { bundle } = await login();
      const rotated = (await (await post('/auth/refresh', { refresh_token: bundle.refresh_token })).json()) as Bundle;
      const reuse = await post('/auth/refresh', { refresh_token: bundle.refresh_token });
      expect(reuse.status).toBe(401);
      const successor = await post('/auth/refresh', { refresh_token: rotated.refresh_token });
      expect(successor.status).toBe(401);
      expect(await errorCodeOf(successor)).toBe('UNAUTHORIZED');
    });

    it('refuses the successor access token once a rotated-away refresh token is presented again', async () => {
      const { bundle } = await login();
      const rotated = (await (await post('/auth/refresh', { refresh_token: bundle.refresh_token })).json()) as Bundle;
      expect((await get('/IsValidSession', bearer(rotated.access_token))).status).toBe(200);
      expect((await post('/auth/refresh', { refresh_token: bundle.refresh_token })).status).toBe(401);
      const answer = await get('/IsValidSession', bearer(rotated.access_token));
      expect(answer.status).toBe(401);
      expect(await errorCodeOf(answer)).toBe('UNAUTHORIZED');
    });

    it('keeps the login working across rotations when no token is reused', async () => {
      const { bundle } = await login();
      let current = bundle;
      for (let i = 0; i < 3; i += 1) {
        const answer = await post('/auth/refresh', { refresh_token: current.refresh_token });
        expect(answer.status).toBe(200);
        current = (await answer.json()) as Bundle;
      }
      expect((await get('/IsValidSession', bearer(current.access_token))).status).toBe(200);
    });
  });

  describe('/validateSession', () => {
    it('ends every cookie exchanged for a token when one of them logs out', async () => {
      const { bundle } = await login();
      const first = sessionCookieOf(await post('/validateSession', { token: bundle.access_token }));
      const second = sessionCookieOf(await post('/validateSession', { token: bundle.access_token }));
      expect((await get('/IsValidSession', { cookie: second })).status).toBe(200);
      expect((await post('/web/logoutS', {}, { cookie: first })).status).toBe(200);
      const answer = await get('/IsValidSession', { cookie: second });
      expect(answer.status).toBe(401);
      expect(await errorCodeOf(answer)).toBe('UNAUTHORIZED');
    });

    it('refuses to exchange the access token of a login that logged out', async () => {
      const { bundle, cookie } = await login();
      expect((await post('/web/logoutS', {}, { cookie })).status).toBe(200);
      const answer = await post('/validateSession', { token: bundle.access_token });
      expect(answer.status).toBe(401);
      expect(await errorCodeOf(answer)).toBe('UNAUTHORIZED');
    });
  });

  describe('token bridge', () => {
    it('hands the tokens to the web client in the URL fragment, never in the query string', async () => {
      const { html } = await login();
      expect(html).toContain('/web/assets/login.html#token=');
      expect(html).not.toMatch(/login\.html\?[^"]*token=/);
    });
  });

  describe('OAuth state', () => {
    /** Starts a Discord login in one browser: the callback URL and that browser's state cookie. */
    async function startFlow(email: string): Promise<{ callback: string; stateCookie: string }> {
      provider.loginAs({ id: `d-${email}`, username: 'mallory', email, verified: true });
      const started = await get('/auth/discord/url');
      expect(started.status).toBe(200);
      const stateCookie = /tb_oauth_state=[^;]+/.exec(started.headers.get('set-cookie') ?? '')?.[0] ?? '';
      const { auth_url } = (await started.json()) as { auth_url: string };
      const atProvider = await fetch(auth_url, { redirect: 'manual' });
      return { callback: atProvider.headers.get('location')!, stateCookie };
    }

    it('refuses a callback opened in a browser that did not start the flow (login CSRF)', async () => {
      // The attacker starts a login to their own account and sends the callback URL to a victim.
      const { callback } = await startFlow(freshEmail('attacker'));
      const victim = await fetch(callback);
      expect(victim.status).toBe(400);
      expect(await victim.text()).toContain('started in another browser');
      expect(victim.headers.get('set-cookie') ?? '').not.toMatch(/tb_session=[^;]/);
    });

    it('completes the login in the browser that holds the state cookie', async () => {
      const { callback, stateCookie } = await startFlow(freshEmail('owner'));
      expect(stateCookie).toMatch(/^tb_oauth_state=/);
      const answer = await fetch(callback, { headers: { cookie: stateCookie } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('set-cookie')).toMatch(/tb_session=[^;]+/);
    });
  });

  describe('magic-link address', () => {
    it.each(['x<VICTIM>', '"x"<VICTIM>', 'a(b)<VICTIM>', 'VICTIM, other@example.test'])(
      'refuses %s with 400 and mails nothing',
      async (form) => {
        const victim = freshEmail('victim');
        const answer = await post('/auth/magic/request', { email: form.replace('VICTIM', victim) });
        expect(answer.status).toBe(400);
        expect(await errorCodeOf(answer)).toBe('BAD_REQUEST');
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(smtp.mails.some((mail) => mail.to.some((to) => to.includes(victim)))).toBe(false);
      },
    );
  });

  describe('forwarded headers without TRUST_PROXY', () => {
    it("builds mailed links from the worker's own origin, not X-Forwarded-Proto or X-Forwarded-Host", async () => {
      const email = freshEmail('forwarded');
      const answer = await post(
        '/auth/magic/request',
        { email },
        { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
      );
      expect(answer.status).toBe(202);
      expect(magicLinkIn(await smtp.next(email))).toMatch(new RegExp(`^${worker.baseUrl}/auth/magic/verify\\?token=`));
    });

    it('answers the socket address at /api/ip, not X-Forwarded-For', async () => {
      const answer = await get('/api/ip', { 'x-forwarded-for': '203.0.113.9' });
      expect(answer.status).toBe(200);
      expect(JSON.stringify(await answer.json())).not.toContain('203.0.113.9');
    });
  });
});
