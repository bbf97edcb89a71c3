import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { magicLinkLogin, startSmtpSink, type SmtpSink } from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { startBrowser, type BrowserUnderTest } from '../../support/browser.js';
import { startHttpWorkerApp, type RunningHttpWorker } from '../../../src/apps/http-worker.app-module.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

/** What the page's calls answer: the HTTP status and the JSON body. */
interface Answer {
  status: number;
  body: {
    error: string;
    result: { data: Record<string, any> | null };
    info: { exec_code: number; help_text: string };
  };
}

/**
 * The web client's passkey calls, written from the description of the original library (`user.js`): options from
 * `result.data`, `challenge`, `user.id` and credential ids decoded from base64url, the credential sent back as
 * `{credential: {id, rawId, type, response}, username[, displayName]}` with binary fields as unpadded base64url and
 * no `clientExtensionResults` or `transports`; a Bearer header only on registration.
 */
const CLIENT_SCRIPT = `
  const fromB64url = (text) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0)).buffer;
  };
  const toB64url = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const call = async (name, body, token, base = '') => {
    const headers = { 'Content-Type': 'application/json' };
    if (token) headers.Authorization = 'Bearer ' + token;
    const response = await fetch(base + '/api/CloudM.Auth/' + name, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };
  const optionsOf = (answer) => answer.body.result?.data ?? answer.body.data ?? answer.body.result ?? answer.body;
  const encode = (credential) => {
    const response = {
      clientDataJSON: toB64url(credential.response.clientDataJSON),
      attestationObject: credential.response.attestationObject ? toB64url(credential.response.attestationObject) : undefined,
      authenticatorData: credential.response.authenticatorData ? toB64url(credential.response.authenticatorData) : undefined,
      signature: credential.response.signature ? toB64url(credential.response.signature) : undefined,
      userHandle: credential.response.userHandle ? toB64url(credential.response.userHandle) : null,
    };
    for (const key of Object.keys(response)) if (response[key] === undefined) delete response[key];
    return { id: credential.id, rawId: toB64url(credential.rawId), type: credential.type, response };
  };
  window.tb = {
    call,
    /** 'finishBase': another worker's URL for the finish call (the same page origin). */
    async registerPasskey(token, username, displayName, finishBase) {
      const start = await call('passkey_register_start', { username, displayName }, token);
      if (start.status !== 200) return { start, finish: null };
      const options = optionsOf(start);
      options.challenge = fromB64url(options.challenge);
      options.user.id = fromB64url(options.user.id);
      options.excludeCredentials = (options.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) }));
      const credential = await navigator.credentials.create({ publicKey: options });
      const finish = await call(
        'passkey_register_finish', { credential: encode(credential), username, displayName }, token, finishBase);
      return { start, finish };
    },
    /** A login; 'userHandle' replaces the handle the authenticator returned (a client claiming another user). */
    async loginWithPasskey(username, userHandle, startBase) {
      const start = await call('passkey_login_start', { username }, null, startBase);
      const options = optionsOf(start);
      options.challenge = fromB64url(options.challenge);
      options.allowCredentials = (options.allowCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) }));
      const credential = encode(await navigator.credentials.get({ publicKey: options }));
      if (userHandle !== undefined) credential.response.userHandle = userHandle;
      const sent = { credential, username };
      const finish = await call('passkey_login_finish', sent);
      return { start, finish, sent };
    },
  };
`;

interface BrowserSession {
  page: Page;
  context: BrowserContext;
  cdp: CDPSession;
  authenticatorId: string;
}

describe.each(backends())('Passkeys from the web client in Chromium on $name', (backend) => {
  let worker: HttpWorkerUnderTest;
  let smtp: SmtpSink;
  let browser: BrowserUnderTest;
  /** The worker as the browser reaches it: WebAuthn needs a domain (not an IP) and a secure context (localhost). */
  let origin = '';
  let counter = 0;

  async function signIn(): Promise<{ token: string; userId: string }> {
    const email = `passkey-${++counter}-${Date.now().toString(36)}@example.test`;
    const { session } = await magicLinkLogin(worker.baseUrl, smtp, email);
    return { token: session.token, userId: session.userId };
  }

  /** A page of the worker's origin with the client script and its own virtual platform authenticator. */
  async function openClient(): Promise<BrowserSession> {
    const { page, context } = await browser.newPage();
    // A document the worker itself served (its /health), so the page is in the loopback address space like the
    // workers it calls; the client script runs in it as the library's would.
    await page.goto(`${origin}/health`);
    await page.evaluate(`(() => {${CLIENT_SCRIPT}})()`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { page, context, cdp, authenticatorId };
  }

  const register = (client: BrowserSession, token: string | null, finishBase = '') =>
    client.page.evaluate(
      ([bearer, base]) => (globalThis as any).tb.registerPasskey(bearer, 'passkey-user', 'Passkey User', base),
      [token, finishBase] as const,
    ) as Promise<{ start: Answer; finish: Answer | null }>;
  const login = (client: BrowserSession, userHandle?: string, startBase = '') =>
    client.page.evaluate(
      ([handle, base]) => (globalThis as any).tb.loginWithPasskey('passkey-user', handle ?? undefined, base),
      [userHandle ?? null, startBase] as const,
    ) as Promise<{ start: Answer; finish: Answer; sent: unknown }>;
  const call = (client: BrowserSession, name: string, body: unknown, token?: string) =>
    client.page.evaluate(([fn, payload, bearer]) => (globalThis as any).tb.call(fn, payload, bearer), [
      name,
      body,
      token ?? null,
    ] as const) as Promise<Answer>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    worker = await startHttpWorker(backend, { SMTP_URL: smtp.url, MAIL_FROM: 'Toolbox <login@example.test>' });
    origin = worker.baseUrl.replace('127.0.0.1', 'localhost');
    browser = await startBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await smtp?.close();
  });

  describe('one user: register, sign out, sign in with the passkey', () => {
    let client: BrowserSession;
    let owner: { token: string; userId: string };
    let credentialId = '';

    beforeAll(async () => {
      client = await openClient();
      owner = await signIn();
    });

    it('refuses to start a registration without a session', async () => {
      const { start, finish } = await register(client, null);
      expect(start.status).toBe(401);
      expect(start.body.info.help_text).toContain('needs a session');
      expect(finish).toBeNull();
    });

    it('registers a passkey for the signed-in user, who then lists it', async () => {
      const { start, finish } = await register(client, owner.token);
      expect(start.status).toBe(200);
      expect(start.body.error).toBe('none');
      expect(start.body.result.data).toMatchObject({ rp: { id: 'localhost' }, attestation: 'none' });
      expect(finish!.status).toBe(200);
      expect(finish!.body.result.data).toMatchObject({ success: true, name: 'Passkey' });
      credentialId = finish!.body.result.data!.credential_id as string;
      const { credentials } = await client.cdp.send('WebAuthn.getCredentials', {
        authenticatorId: client.authenticatorId,
      });
      expect(
        credentials.map((credential) => Buffer.from(credential.credentialId, 'base64').toString('base64url')),
      ).toEqual([credentialId]);
      const listed = await call(client, 'list_passkeys', {}, owner.token);
      expect(listed.body.result.data!.passkeys).toEqual([
        expect.objectContaining({ credential_id: credentialId, sign_count: expect.any(Number) }),
      ]);
    });

    it('signs out: the old access token is refused', async () => {
      const logout = await fetch(`${worker.baseUrl}/web/logoutS`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, accept: 'application/json' },
      });
      expect(logout.status).toBe(200);
      const listed = await call(client, 'list_passkeys', {}, owner.token);
      expect(listed.status).toBe(401);
    });

    it('signs in with the passkey: the same tokens a magic link issues, for the owner', async () => {
      const { start, finish } = await login(client);
      expect(start.status).toBe(200);
      expect(start.body.result.data).toMatchObject({ rpId: 'localhost', allowCredentials: [] });
      expect(finish.status).toBe(200);
      expect(finish.body.error).toBe('none');
      const data = finish.body.result.data!;
      expect(data).toMatchObject({
        authenticated: true,
        user_id: owner.userId,
        provider: 'passkey',
        token_type: 'Bearer',
        expires_in: 900,
      });
      // What the client does next with the token: the cookie session, then its own passkeys.
      const validated = await fetch(`${worker.baseUrl}/validateSession`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${data.access_token}` },
        body: JSON.stringify({ session_token: data.access_token, user_id: data.user_id }),
      });
      expect(validated.status).toBe(200);
      expect(((await validated.json()) as Answer['body']).result.data).toMatchObject({ user_id: owner.userId });
      const listed = await call(client, 'list_passkeys', {}, data.access_token as string);
      expect(listed.status).toBe(200);
      expect(listed.body.result.data!.passkeys[0].last_used_at).not.toBeNull();
      const refreshed = await fetch(`${worker.baseUrl}/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: data.refresh_token }),
      });
      expect(refreshed.status).toBe(200);
    });

    it('refuses a replayed assertion', async () => {
      const { finish, sent } = await login(client);
      expect(finish.status).toBe(200);
      const replay = await call(client, 'passkey_login_finish', sent);
      expect(replay.status).toBe(401);
      expect(replay.body.info.help_text).toBe('Invalid or expired challenge');
    });

    it('refuses an assertion of a cloned authenticator whose counter lags behind', async () => {
      const { credentials } = await client.cdp.send('WebAuthn.getCredentials', {
        authenticatorId: client.authenticatorId,
      });
      const [original] = credentials;
      expect(original.signCount).toBeGreaterThan(1);
      await client.cdp.send('WebAuthn.removeCredential', {
        authenticatorId: client.authenticatorId,
        credentialId: original.credentialId,
      });
      await client.cdp.send('WebAuthn.addCredential', {
        authenticatorId: client.authenticatorId,
        credential: { ...original, signCount: 0 },
      });
      const { finish } = await login(client);
      expect(finish.status).toBe(401);
      expect(finish.body.info.help_text).toMatch(/^Authentication verification failed: .*counter/);
      expect(finish.body.result.data).toMatchObject({ code: 'UNAUTHORIZED' });
    });
  });

  describe('two users', () => {
    let first: BrowserSession;
    let second: BrowserSession;
    let firstUser: { token: string; userId: string };
    let secondUser: { token: string; userId: string };
    let firstCredential = '';

    beforeAll(async () => {
      [first, second] = [await openClient(), await openClient()];
      [firstUser, secondUser] = [await signIn(), await signIn()];
      firstCredential = (await register(first, firstUser.token)).finish!.body.result.data!.credential_id as string;
      expect((await register(second, secondUser.token)).finish!.status).toBe(200);
    });

    it("refuses an assertion of one user's passkey that claims to be the other user", async () => {
      const { finish } = await login(first, Buffer.from(secondUser.userId).toString('base64url'));
      expect(finish.status).toBe(401);
      expect(finish.body.info.help_text).toContain('belongs to another user');
      expect(finish.body.result.data).not.toHaveProperty('access_token');
    });

    it('logs each user in with their own passkey', async () => {
      expect((await login(first)).finish.body.result.data).toMatchObject({ user_id: firstUser.userId });
      expect((await login(second)).finish.body.result.data).toMatchObject({ user_id: secondUser.userId });
    });

    it("refuses to remove another user's passkey, which keeps working", async () => {
      const refused = await call(second, 'delete_passkey', { credential_id: firstCredential }, secondUser.token);
      expect(refused.status).toBe(404);
      expect(refused.body.info.help_text).toBe('Passkey credential not found');
      const listed = await call(first, 'list_passkeys', {}, firstUser.token);
      expect(
        listed.body.result.data!.passkeys.map((passkey: { credential_id: string }) => passkey.credential_id),
      ).toEqual([firstCredential]);
      expect((await login(first)).finish.status).toBe(200);
    });

    it('lets the owner remove their passkey, after which it signs nobody in', async () => {
      const removed = await call(first, 'delete_passkey', { credential_id: firstCredential }, firstUser.token);
      expect(removed.status).toBe(200);
      expect(removed.body.result.data).toMatchObject({ deleted: true });
      const { finish } = await login(first);
      expect(finish.status).toBe(401);
      expect(finish.body.info.help_text).toBe('Passkey not registered');
    });
  });

  describe('two workers sharing one store', () => {
    let other: RunningHttpWorker;
    let otherBase = '';

    beforeAll(async () => {
      // A second worker on the same database (and Redis): the page stays on the first worker's origin, so the
      // second one is told that origin.
      other = await startHttpWorkerApp(
        {
          ...worker.config,
          httpWorker: { ...worker.config.httpWorker, basePort: 0 },
          workerAuth: {
            ...worker.config.workerAuth,
            webauthn: { rpId: 'localhost', rpName: 'Toolbox', origins: [origin] },
          },
        },
        {},
        { logger: ['error'] },
      );
      otherBase = other.url.replace('127.0.0.1', 'localhost');
    });
    afterAll(async () => {
      await other?.drain(0).catch(() => undefined);
    });

    it('finishes on one worker a ceremony started on the other', async () => {
      const client = await openClient();
      const user = await signIn();
      const { finish } = await register(client, user.token, otherBase);
      expect(finish!.status).toBe(200);
      expect(finish!.body.result.data).toMatchObject({ success: true });
      const login = await client.page.evaluate(
        ([base]) => (globalThis as any).tb.loginWithPasskey('passkey-user', undefined, base),
        [otherBase] as const,
      );
      expect(login.finish.status).toBe(200);
      expect(login.finish.body.result.data).toMatchObject({ user_id: user.userId, provider: 'passkey' });
    });
  });
});
