import { magicLinkIn, startSmtpSink, type SmtpSink } from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

interface Login {
  access_token: string;
  refresh_token: string;
  user_id: string;
  username: string;
  email: string;
  level: number;
}

/**
 * The `CloudM.Auth` functions of the original web client at `/api/CloudM.Auth/{fn}`: each one's answers in the
 * Result envelope and its refusals (wrong level, another user's record, unknown or forbidden fields, expired or
 * reused tokens, attempt limits), on a real worker.
 */
describe.each(backends())('CloudM.Auth functions on $name', (backend) => {
  let worker: HttpWorkerUnderTest;
  let smtp: SmtpSink;
  let counter = 0;
  const freshEmail = (label: string) => `${label}-${++counter}-${Date.now().toString(36)}@example.test`;

  const call = (fn: string, body: unknown = {}, headers: Record<string, string> = {}) =>
    fetch(`${worker.baseUrl}/api/CloudM.Auth/${fn}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const json = (response: Response): Promise<any> => response.json();

  /** Signs in through request_magic_link + verify_magic_link (the CLI's JSON flow). */
  async function login(email = freshEmail('user')): Promise<Login> {
    const requested = await call('request_magic_link', { email });
    expect(requested.status).toBe(200);
    const token = new URL(magicLinkIn(await smtp.next(email))).searchParams.get('token')!;
    const verified = await call('verify_magic_link', { token });
    expect(verified.status).toBe(200);
    return (await json(verified)).result.data as Login;
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    worker = await startHttpWorker(backend, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Toolbox <login@example.test>',
      REFRESH_REUSE_GRACE_SECONDS: '2',
      USER_DATA_MAX_BYTES: '2048',
    });
  });

  afterAll(async () => {
    await worker?.close();
    await smtp?.close();
  });

  describe('magic links', () => {
    it('answers the login data and a token bundle in the Result envelope', async () => {
      const email = freshEmail('magic');
      const data = await login(email);
      expect(data).toMatchObject({ authenticated: true, email, provider: 'magic_link', token_type: 'Bearer' });
      expect(data.user_id).toMatch(/^usr_[0-9a-f]{24}$/);
    });

    it('refuses a used link with 401 and the reason in info.help_text', async () => {
      const email = freshEmail('used');
      await call('request_magic_link', { email });
      const token = new URL(magicLinkIn(await smtp.next(email))).searchParams.get('token')!;
      expect((await call('verify_magic_link', { token })).status).toBe(200);
      const again = await call('verify_magic_link', { token });
      expect(again.status).toBe(401);
      expect(await json(again)).toMatchObject({ error: 'InputError', info: { exec_code: 401 } });
    });

    it('refuses a request without a valid e-mail with 400', async () => {
      const answer = await call('request_magic_link', { email: 'not-an-address' });
      expect(answer.status).toBe(400);
      expect((await json(answer)).info.help_text).toMatch(/e-mail/);
    });
  });

  describe('magic links polled by a command-line client', () => {
    const form = (fields: Record<string, string>) =>
      fetch(`${worker.baseUrl}/auth/magic/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });

    async function requestPolled(email: string) {
      const requested = await call('request_magic_link', { email, poll: true });
      expect(requested.status).toBe(200);
      const data = (await json(requested)).result.data as { poll_id: string; confirm_code: string };
      expect(data.confirm_code).toMatch(/^[A-Z2-9]{6}$/);
      const link = magicLinkIn(await smtp.next(email));
      expect(link).not.toContain(data.poll_id);
      return { ...data, link, token: new URL(link).searchParams.get('token')! };
    }

    it('answers pending, then the login once after the person typed the code on the link page', async () => {
      const email = freshEmail('poll');
      const { poll_id, confirm_code, link, token } = await requestPolled(email);
      const pending = await call('check_magic_link_status', { poll_id });
      expect((await json(pending)).result.data).toEqual({ status: 'pending' });
      const page = await (await fetch(link)).text();
      expect(page).toContain('name="confirm_code"');
      const approved = await form({ token, confirm_code: confirm_code.toLowerCase() });
      expect(approved.status).toBe(200);
      expect(approved.headers.get('set-cookie')).toBeNull();
      const done = await call('check_magic_link_status', { poll_id });
      expect(done.status).toBe(200);
      expect((await json(done)).result.data).toMatchObject({
        status: 'done',
        email,
        provider: 'magic_link',
        access_token: expect.any(String),
      });
      expect((await call('check_magic_link_status', { poll_id })).status).toBe(404);
    });

    it('does not sign the polling client in by a click without the code, and refuses after three wrong codes', async () => {
      const { poll_id, confirm_code, token } = await requestPolled(freshEmail('unsolicited'));
      const wrong = confirm_code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
      expect((await form({ token })).status).toBe(400);
      expect((await form({ token, confirm_code: wrong })).status).toBe(400);
      expect((await json(await call('check_magic_link_status', { poll_id }))).result.data.status).toBe('pending');
      expect((await form({ token, confirm_code: wrong })).status).toBe(401);
      expect((await form({ token, confirm_code })).status).toBe(401);
      const refused = await call('check_magic_link_status', { poll_id });
      expect(refused.status).toBe(401);
      expect((await json(refused)).info.help_text).toMatch(/used up/);
    });
  });

  describe('validate_session', () => {
    it('answers who the access token belongs to, with settings', async () => {
      const user = await login();
      const answer = await call('validate_session', { token: user.access_token });
      expect(answer.status).toBe(200);
      expect((await json(answer)).result.data).toMatchObject({
        authenticated: true,
        user_id: user.user_id,
        settings: {},
      });
    });

    it('refuses a missing or forged token with 401', async () => {
      expect((await call('validate_session', {})).status).toBe(401);
      const forged = await call('validate_session', { token: 'a.b.c' });
      expect(forged.status).toBe(401);
      expect((await json(forged)).error).toBe('InputError');
    });
  });

  describe('refresh_token', () => {
    it('accepts the web client {refresh_token, token} body and answers a new pair', async () => {
      const user = await login();
      const answer = await call('refresh_token', { refresh_token: user.refresh_token, token: user.access_token });
      expect(answer.status).toBe(200);
      const body = await json(answer);
      expect(body.error).toBe('none');
      expect(body.result.data.access_token).toEqual(expect.any(String));
      expect(body.result.data.refresh_token).not.toBe(user.refresh_token);
    });

    it('works with an expired Bearer and a stale cookie sent along', async () => {
      const user = await login();
      const expired = worker.token({ id: user.user_id, username: user.username }, -10);
      const answer = await call(
        'refresh_token',
        { refresh_token: user.refresh_token },
        { ...bearer(expired), cookie: 'tb_session=stale.value' },
      );
      expect(answer.status).toBe(200);
    });

    it('gives the same refresh token to a second refresh within the grace window', async () => {
      const user = await login();
      const [first, second] = await Promise.all([
        call('refresh_token', { refresh_token: user.refresh_token }),
        call('refresh_token', { refresh_token: user.refresh_token }),
      ]);
      expect([first.status, second.status]).toEqual([200, 200]);
      const [a, b] = [(await json(first)).result.data, (await json(second)).result.data];
      // Same refresh jti: either pair keeps the login going.
      const jti = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
      expect(jti(a.refresh_token)).toBe(jti(b.refresh_token));
      expect((await call('refresh_token', { refresh_token: b.refresh_token })).status).toBe(200);
    });

    it('ends the login when a rotated-away token comes back after the grace window', async () => {
      const user = await login();
      const rotated = (await json(await call('refresh_token', { refresh_token: user.refresh_token }))).result.data;
      await new Promise((resolve) => setTimeout(resolve, 2300));
      const reuse = await call('refresh_token', { refresh_token: user.refresh_token });
      expect(reuse.status).toBe(401);
      const successor = await call('refresh_token', { refresh_token: rotated.refresh_token });
      expect(successor.status).toBe(401);
      expect((await json(successor)).info.help_text).toMatch(/already used|revoked/);
    });

    it('refuses an access token given as the refresh token, and a missing one', async () => {
      const user = await login();
      expect((await call('refresh_token', { refresh_token: user.access_token })).status).toBe(401);
      expect((await call('refresh_token', {})).status).toBe(400);
    });
  });

  describe('logout', () => {
    it('ends the login (refresh and access token) and clears the cookie, even with an expired Bearer', async () => {
      const user = await login();
      const expired = worker.token({ id: user.user_id, username: user.username }, -10);
      const answer = await call('logout', { token: user.access_token }, bearer(expired));
      expect(answer.status).toBe(200);
      expect((await json(answer)).result.data).toEqual({ logged_out: true });
      expect(answer.headers.get('set-cookie')).toMatch(/tb_session=;.*Max-Age=0/i);
      expect((await call('refresh_token', { refresh_token: user.refresh_token })).status).toBe(401);
      expect((await call('get_user_data', {}, bearer(user.access_token))).status).toBe(401);
    });
  });

  describe('get_user_data and update_user_data', () => {
    it('needs a session', async () => {
      const answer = await call('get_user_data', {});
      expect(answer.status).toBe(401);
    });

    it("refuses another user's record", async () => {
      const [alice, bob] = [await login(), await login()];
      const read = await call('get_user_data', { user_id: bob.user_id }, bearer(alice.access_token));
      expect(read.status).toBe(403);
      const write = await call(
        'update_user_data',
        { user_id: bob.user_id, settings: { theme: 'x' } },
        bearer(alice.access_token),
      );
      expect(write.status).toBe(403);
      const bobsData = (await json(await call('get_user_data', {}, bearer(bob.access_token)))).result.data;
      expect(bobsData.settings).toEqual({});
    });

    it('merges settings and mod_data and reads them back, also through /api_user_data', async () => {
      const user = await login();
      const auth = bearer(user.access_token);
      await call('update_user_data', { user_id: user.user_id, settings: { theme: 'dark' } }, auth);
      await call('update_user_data', { user_id: user.user_id, settings: { lang: 'de' } }, auth);
      const saved = await call('update_user_data', { mod_data: { Notes: { pinned: [1, 2] } } }, auth);
      expect(saved.status).toBe(200);
      const data = (await json(await call('get_user_data', { user_id: user.user_id }, auth))).result.data;
      expect(data).toMatchObject({ settings: { theme: 'dark', lang: 'de' }, mod_data: { Notes: { pinned: [1, 2] } } });
      expect(JSON.stringify(data)).not.toMatch(/access_token|secret|public_key/);
      const legacy = await fetch(`${worker.baseUrl}/api_user_data`, { headers: auth });
      expect((await json(legacy)).result.data).toMatchObject({ settings: { theme: 'dark' }, mod_data: { Notes: {} } });
    });

    it('refuses level and email changes and unknown fields, changing nothing', async () => {
      const user = await login();
      const auth = bearer(user.access_token);
      const level = await call('update_user_data', { level: -1, settings: { a: 1 } }, auth);
      expect(level.status).toBe(403);
      expect((await json(level)).info.help_text).toMatch(/level/);
      expect((await call('update_user_data', { email: 'other@example.test' }, auth)).status).toBe(403);
      const unknown = await call('update_user_data', { passkeys: [] }, auth);
      expect(unknown.status).toBe(400);
      expect((await json(unknown)).info.help_text).toMatch(/unexpected keyword argument 'passkeys'/);
      const data = (await json(await call('get_user_data', {}, auth))).result.data;
      expect(data).toMatchObject({ level: 1, email: user.email, settings: {} });
    });

    it('refuses settings that are not an object, over the size cap, or a username with markup', async () => {
      const user = await login();
      const auth = bearer(user.access_token);
      expect((await call('update_user_data', { settings: [1, 2] }, auth)).status).toBe(400);
      const big = await call('update_user_data', { settings: { blob: 'x'.repeat(4096) } }, auth);
      expect(big.status).toBe(413);
      expect((await json(big)).info.help_text).toMatch(/limit is 2048/);
      expect((await call('update_user_data', { username: '<img src=x onerror=alert(1)>' }, auth)).status).toBe(400);
      expect((await json(await call('get_user_data', {}, auth))).result.data.settings).toEqual({});
    });
  });

  describe('list_users', () => {
    it('is refused to a signed-in user who is not an admin', async () => {
      const user = await login();
      const answer = await call('list_users', {}, bearer(user.access_token));
      expect(answer.status).toBe(403);
    });

    it('lists users without secrets for an admin', async () => {
      const admin = worker.token({ id: 'usr_admin', username: 'admin', level: -1 });
      const answer = await call('list_users', {}, bearer(admin));
      expect(answer.status).toBe(200);
      const users = (await json(answer)).result.data as Array<Record<string, unknown>>;
      expect(users.length).toBeGreaterThan(0);
      expect(Object.keys(users[0]).sort()).toEqual(['created_at', 'email', 'level', 'user_id', 'username']);
    });
  });

  describe('device invites', () => {
    it('signs a new device in as the inviting user, once', async () => {
      const user = await login();
      const invite = await call('create_device_invite', { user_id: user.user_id }, bearer(user.access_token));
      expect(invite.status).toBe(200);
      const { code, expires_in } = (await json(invite)).result.data;
      expect(code).toMatch(/^\d{6}$/);
      expect(expires_in).toBe(300);
      const verified = await call('verify_device_invite', { code });
      expect(verified.status).toBe(200);
      expect((await json(verified)).result.data).toMatchObject({
        user_id: user.user_id,
        provider: 'device_invite',
        access_token: expect.any(String),
      });
      expect((await call('verify_device_invite', { code })).status).toBe(401);
    });

    it("refuses an invite for another user's account and an anonymous caller", async () => {
      const [alice, bob] = [await login(), await login()];
      expect((await call('create_device_invite', { user_id: bob.user_id }, bearer(alice.access_token))).status).toBe(
        403,
      );
      expect((await call('create_device_invite', {})).status).toBe(401);
    });

    it('stops verifying after five wrong codes from one address, even the right one', async () => {
      const user = await login();
      const { code } = (await json(await call('create_device_invite', {}, bearer(user.access_token)))).result.data as {
        code: string;
      };
      const wrong = code === '000000' ? '000001' : '000000';
      // The earlier tests of this suite sent wrong codes from this address too: five in all are allowed.
      let refused = 0;
      while ((await call('verify_device_invite', { code: wrong })).status === 401) refused += 1;
      expect(refused).toBeLessThanOrEqual(5);
      const limited = await call('verify_device_invite', { code });
      expect(limited.status).toBe(429);
      expect((await json(limited)).info.help_text).toMatch(/Too many wrong invite codes/);
    });
  });

  describe('get_auth_config', () => {
    it('is public and names the sign-in pages', async () => {
      const answer = await call('get_auth_config');
      expect(answer.status).toBe(200);
      expect((await json(answer)).result.data).toMatchObject({
        providers: { discord: { enabled: false }, google: { enabled: false }, passkeys: { enabled: true } },
        sign_in_url: '/web/assets/login.html',
      });
    });
  });

  describe('OAuth redirect_after', () => {
    it("allows the worker's own origin and loopback by default, and refuses a foreign origin", async () => {
      const withGoogle = await startHttpWorker(backend, {
        GOOGLE_CLIENT_ID: 'id',
        GOOGLE_CLIENT_SECRET: 'secret',
        PUBLIC_BASE_URL: 'https://toolbox.example',
      });
      try {
        const url = (after: string) =>
          fetch(`${withGoogle.baseUrl}/auth/google/url?redirect_after=${encodeURIComponent(after)}`);
        expect((await url(withGoogle.baseUrl)).status).toBe(200);
        expect((await url('https://toolbox.example')).status).toBe(200);
        expect((await url('http://127.0.0.1:4242/cli/callback')).status).toBe(200);
        const foreign = await url('https://evil.example');
        expect(foreign.status).toBe(400);
      } finally {
        await withGoogle.close();
      }
    });
  });
});
