import type { Page } from 'playwright-core';
import { magicLinkIn, startSmtpSink, type SmtpSink } from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { startBrowser, type BrowserUnderTest } from '../../support/browser.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

/** What the web client keeps in localStorage `tbjs_user_session`. */
interface StoredSession {
  isAuthenticated: boolean;
  token: string;
  refreshToken: string;
  userId: string;
}

/**
 * The calls the original web client (tbjs) makes, in its order and shapes, from a page in Chromium against a
 * real HTTP worker: the magic-link login through the token bridge, the start-up `/validateSession` and
 * `/api_user_data`, the timed refresh `POST /api/CloudM.Auth/refresh_token {refresh_token, token}` after the
 * access token expired, two tabs refreshing at once, settings saved and read back, sign-out, and a parameterless
 * function posted. Written from the client's documented behaviour; the project carries none of its code.
 * (Passkey logins have a suite of their own.)
 */
describe.each(backends())('The original web client in Chromium on $name', (backend) => {
  let worker: HttpWorkerUnderTest;
  let smtp: SmtpSink;
  let chromium: BrowserUnderTest;
  let counter = 0;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    worker = await startHttpWorker(backend, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Toolbox <login@example.test>',
      // Short access tokens so a refresh after expiry fits in a test.
      ACCESS_TOKEN_TTL_SECONDS: '30',
      NODE_ENV: 'development',
    });
    chromium = await startBrowser();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await worker?.close();
    await smtp?.close();
  });

  /** tbjs's fetch of a CloudM.Auth function: POST, JSON body, Bearer when it has a token. */
  function tbjsCall(page: Page, fn: string, body: unknown, token: string | null) {
    return page.evaluate(
      async ({ fn, body, token }) => {
        const headers: Record<string, string> = { 'Content-Type': 'application/json' };
        if (token) headers.Authorization = `Bearer ${token}`;
        const response = await fetch(`/api/CloudM.Auth/${fn}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          credentials: 'include',
        });
        return { status: response.status, body: (await response.json()) as any };
      },
      { fn, body, token },
    );
  }

  /** Signs in by magic link in `page` and lands on the bridge's target, as a person clicking the mail would. */
  async function signIn(page: Page): Promise<StoredSession> {
    const email = `tbjs-${++counter}-${Date.now().toString(36)}@example.test`;
    await page.goto(`${worker.baseUrl}/health`);
    const requested = await page.evaluate(async (email) => {
      const response = await fetch('/auth/magic/request', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      return response.status;
    }, email);
    expect(requested).toBe(202);
    await page.goto(magicLinkIn(await smtp.next(email)));
    await Promise.all([page.waitForURL(/\/web\/assets\/login\.html#token=/), page.click('button[type=submit]')]);
    const stored = await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(
        'tbjs_user_session',
      ),
    );
    const session = JSON.parse(stored!) as StoredSession;
    expect(session).toMatchObject({ isAuthenticated: true, token: expect.any(String) });
    // tbjs at start-up: validate the stored session (Bearer + {session_token, user_id}), then read the user data.
    const valid = await page.evaluate(async (session) => {
      const response = await fetch('/validateSession', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${session.token}` },
        body: JSON.stringify({ session_token: session.token, user_id: session.userId }),
      });
      return { status: response.status, body: (await response.json()) as any };
    }, session);
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ error: 'none', result: { data: { authenticated: true } } });
    return session;
  }

  it('signs in by magic link and reads settings and mod_data from /api_user_data', async () => {
    const { page } = await chromium.newPage();
    const session = await signIn(page);
    const userData = await page.evaluate(async (token) => {
      const response = await fetch('/api_user_data', { headers: { Authorization: `Bearer ${token}` } });
      return (await response.json()) as any;
    }, session.token);
    expect(userData.result.data).toMatchObject({ user_id: session.userId, settings: {}, mod_data: {} });
  }, 60_000);

  it('refreshes after the access token expired, with the body tbjs sends, and keeps working', async () => {
    const { page } = await chromium.newPage();
    const session = await signIn(page);
    await new Promise((resolve) => setTimeout(resolve, 31_000));
    const expired = await tbjsCall(page, 'get_user_data', { user_id: session.userId }, session.token);
    expect(expired.status).toBe(401);
    // tbjs's 401 path: one refresh without Authorization, body {refresh_token, token}, then one retry.
    const refreshed = await tbjsCall(
      page,
      'refresh_token',
      { refresh_token: session.refreshToken, token: session.token },
      null,
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.error).toBe('none');
    const retried = await tbjsCall(
      page,
      'get_user_data',
      { user_id: session.userId },
      refreshed.body.result.data.access_token,
    );
    expect(retried.status).toBe(200);
    expect(retried.body.result.data.user_id).toBe(session.userId);
  }, 90_000);

  it('lets two tabs refresh with the same token at once and both stay signed in', async () => {
    const first = await chromium.newPage();
    const session = await signIn(first.page);
    // A second tab of the same browser: same origin storage, its own copy of the tokens.
    const second = await first.context.newPage();
    await second.goto(`${worker.baseUrl}/health`);
    const body = { refresh_token: session.refreshToken, token: session.token };
    const [a, b] = await Promise.all([
      tbjsCall(first.page, 'refresh_token', body, null),
      tbjsCall(second, 'refresh_token', body, null),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    for (const [page, answer] of [
      [first.page, a],
      [second, b],
    ] as const) {
      const data = await tbjsCall(page, 'get_user_data', {}, answer.body.result.data.access_token);
      expect(data.status).toBe(200);
    }
    // The next timed refresh of the second tab still works.
    const later = await tbjsCall(second, 'refresh_token', { refresh_token: b.body.result.data.refresh_token }, null);
    expect(later.status).toBe(200);
  }, 60_000);

  it('saves settings and mod data and reads them back', async () => {
    const { page } = await chromium.newPage();
    const session = await signIn(page);
    const saved = await tbjsCall(
      page,
      'update_user_data',
      { user_id: session.userId, settings: { theme: 'dark' } },
      session.token,
    );
    expect(saved.body.error).toBe('none');
    const modData = await tbjsCall(
      page,
      'update_user_data',
      { user_id: session.userId, mod_data: { Notes: { pinned: ['a'] } } },
      session.token,
    );
    expect(modData.body.error).toBe('none');
    const read = await tbjsCall(page, 'get_user_data', { user_id: session.userId }, session.token);
    expect(read.body.result.data).toMatchObject({
      settings: { theme: 'dark' },
      mod_data: { Notes: { pinned: ['a'] } },
    });
    // A refused save: tbjs shows info.help_text.
    const refused = await tbjsCall(page, 'update_user_data', { user_id: session.userId, level: -1 }, session.token);
    expect(refused.status).toBe(403);
    expect(refused.body.info.help_text).toMatch(/level/);
  }, 60_000);

  it('signs out: the old token and the cookie are refused afterwards', async () => {
    const { page, context } = await chromium.newPage();
    const session = await signIn(page);
    expect((await context.cookies()).some((cookie) => cookie.name === 'tb_session')).toBe(true);
    const loggedOut = await tbjsCall(page, 'logout', { token: session.token }, session.token);
    expect(loggedOut.status).toBe(200);
    expect(loggedOut.body.result.data).toEqual({ logged_out: true });
    expect((await context.cookies()).some((cookie) => cookie.name === 'tb_session')).toBe(false);
    const withToken = await tbjsCall(page, 'get_user_data', {}, session.token);
    expect(withToken.status).toBe(401);
    const refresh = await tbjsCall(page, 'refresh_token', { refresh_token: session.refreshToken }, null);
    expect(refresh.status).toBe(401);
  }, 60_000);

  it('refuses the cookie of a signed-out login even when the browser still sends it', async () => {
    const { page, context } = await chromium.newPage();
    const session = await signIn(page);
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'tb_session')!;
    await tbjsCall(page, 'logout', { token: session.token }, session.token);
    await context.addCookies([cookie]);
    const status = await page.evaluate(async () => (await fetch('/IsValidSession')).status);
    expect(status).toBe(401);
  }, 60_000);

  it("brings every refusal's reason to where tbjs reads it (info.help_text after its non-2xx normalisation)", async () => {
    const { page } = await chromium.newPage();
    const session = await signIn(page);
    const normalised = await page.evaluate(
      async ({ token, userId }) => {
        // tbjs: a non-2xx body becomes {error: body.error || "InternalError", info: body.info || {exec_code:
        // status, help_text: body.message || statusText}}.
        const normalise = async (response: Response) => {
          const body = (await response.json()) as any;
          return {
            status: response.status,
            error: body.error || 'InternalError',
            info: body.info || { exec_code: response.status, help_text: body.message || response.statusText },
          };
        };
        const post = (fn: string, body: unknown, bearer?: string) =>
          fetch(`/api/CloudM.Auth/${fn}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}) },
            body: JSON.stringify(body),
          }).then(normalise);
        return {
          level: await post('update_user_data', { user_id: userId, level: -1 }, token),
          unknownField: await post('update_user_data', { user_id: userId, nickname: 'x' }, token),
          badRefresh: await post('refresh_token', { refresh_token: 'not-a-token', token }),
          noSession: await post('get_user_data', { user_id: userId }, 'forged.token.value'),
        };
      },
      { token: session.token, userId: session.userId },
    );
    expect(normalised.level).toMatchObject({ status: 403, info: { help_text: expect.stringMatching(/level/) } });
    expect(normalised.unknownField).toMatchObject({
      status: 400,
      info: { help_text: expect.stringMatching(/nickname/) },
    });
    expect(normalised.badRefresh).toMatchObject({ status: 401, info: { help_text: expect.stringMatching(/token/) } });
    expect(normalised.noSession).toMatchObject({ status: 401, info: { help_text: expect.any(String) } });
    expect(normalised.noSession.info.help_text.length).toBeGreaterThan(0);
  }, 60_000);

  it('answers a parameterless function called with POST, as tbjs calls it', async () => {
    const { page } = await chromium.newPage();
    // Signed in: tbjs's page has the session cookie (core is not an open module here).
    await signIn(page);
    const answers = await page.evaluate(async () => {
      const empty = await fetch('/api/core/version', { method: 'POST' });
      const json = await fetch('/api/core/version', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      return [
        { status: empty.status, body: (await empty.json()) as any },
        { status: json.status, body: (await json.json()) as any },
      ];
    });
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.result.data.version).toEqual(expect.any(String));
    }
  }, 60_000);
});
