import { magicLinkLogin, startSmtpSink, type SmtpSink } from '../../fixtures/smtp-sink.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import {
  spawnHttpWorker,
  startHttpWorker,
  type HttpWorkerUnderTest,
  type SpawnedHttpWorker,
} from '../../support/worker-under-test.js';
import type { PlatformConfig } from '../../../src/config/config.js';
import { eventually } from '../../support/eventually.js';

/** The environment that points another process at the same database and Redis as `config`. */
function sameStorage(config: PlatformConfig): Record<string, string> {
  return {
    DATABASE_URL: config.database.type === 'sqlite' ? `sqlite:${config.database.location}` : config.database.location,
    ...(config.redisUrl ? { REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix } : {}),
  };
}

/**
 * The platform's login end to end: a person logs in by magic link at one HTTP worker, uses the access
 * token at the registry (same PLATFORM_JWT_SECRET) and at a second worker process; a logout at the first
 * worker is refused at once by the other process and by the registry (shared revocation store).
 */
describe.each(backends())('Login by magic link, then the registry, on $name', (backend) => {
  let registry: RegistryUnderTest;
  let worker: HttpWorkerUnderTest;
  let other: SpawnedHttpWorker;
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    registry = await startRegistry(backend);
    const storage = sameStorage(registry.config);
    worker = await startHttpWorker(backend, { ...storage, SMTP_URL: smtp.url });
    other = await spawnHttpWorker({ ...storage, DATA_DIR: registry.dataDir, NODE_ENV: 'development' });
  }, 90_000);

  afterAll(async () => {
    other?.kill();
    await worker?.close();
    await registry?.close();
    await smtp?.close();
  });

  async function magicLogin(email: string): Promise<{ accessToken: string; refreshToken: string; cookie: string }> {
    const { answer, session } = await magicLinkLogin(worker.baseUrl, smtp, email);
    const cookie = /tb_session=[^;]+/.exec(answer.headers.get('set-cookie') ?? '')![0];
    return { accessToken: session.token, refreshToken: session.refreshToken, cookie };
  }

  const registryAs = (token: string, path: string, body: unknown) =>
    fetch(`${registry.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  it('creates a registry package with the access token the magic link gave', async () => {
    const { accessToken } = await magicLogin(`publisher-${Date.now().toString(36)}@example.test`);
    const publisher = `pub-${Date.now().toString(36)}`;
    expect(
      (await registryAs(accessToken, '/api/v1/auth/register-publisher', { name: publisher, display_name: 'Pub' }))
        .status,
    ).toBe(201);
    const name = `magic-pkg-${Date.now().toString(36)}`;
    const created = await registryAs(accessToken, '/api/v1/packages', {
      name,
      display_name: name,
      description: 'Made with a WorkerAuth token',
      package_type: 'mod',
    });
    expect(created.status).toBe(201);
    const shown = await fetch(`${registry.baseUrl}/api/v1/packages/${name}`);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ name });
  });

  it('a logout at one worker is refused at once by another worker process and by the registry', async () => {
    const { accessToken, cookie } = await magicLogin(`leaver-${Date.now().toString(36)}@example.test`);
    const bearer = { authorization: `Bearer ${accessToken}` };
    expect((await fetch(`${other.baseUrl}/IsValidSession`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${other.baseUrl}/IsValidSession`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${registry.baseUrl}/api/v1/auth/me`, { headers: bearer })).status).toBe(200);

    const out = await fetch(`${worker.baseUrl}/web/logoutS`, {
      method: 'POST',
      headers: { ...bearer, cookie, accept: 'application/json' },
    });
    expect(out.status).toBe(200);

    // No waiting: the revocation is in the shared store before the logout answers, and nobody caches it.
    expect((await fetch(`${other.baseUrl}/IsValidSession`, { headers: bearer })).status).toBe(401);
    expect((await fetch(`${other.baseUrl}/IsValidSession`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${registry.baseUrl}/api/v1/auth/me`, { headers: bearer })).status).toBe(401);
    const refused = await registryAs(accessToken, '/api/v1/auth/register-publisher', {
      name: 'late',
      display_name: 'Late',
    });
    expect(refused.status).toBe(401);
  });

  it('without SMTP_URL writes the magic link to the log, and without OAuth credentials answers 503', async () => {
    const email = `logged-${Date.now().toString(36)}@example.test`;
    const requested = await fetch(`${other.baseUrl}/auth/magic/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(requested.status).toBe(202);
    const line = await eventually(
      async () => other.output(),
      (output) => output.includes(`Magic link for ${email}`),
    );
    const link = new RegExp(
      `Magic link for ${email.replace(/[.]/g, '\\.')}: (\\S+/auth/magic/verify\\?token=[\\w-]+)`,
    ).exec(line)![1];
    expect(link.startsWith(other.baseUrl)).toBe(true);
    const answer = await fetch(`${other.baseUrl}/auth/magic/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: new URL(link).searchParams.get('token')! }).toString(),
    });
    expect(answer.status).toBe(200);
    // NODE_ENV=development: the cookie works over plain HTTP.
    expect(answer.headers.get('set-cookie')).toMatch(
      /^tb_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/,
    );

    for (const provider of ['discord', 'google']) {
      const response = await fetch(`${other.baseUrl}/auth/${provider}/url`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { info: { exec_code: number; help_text: string } };
      expect(body.info).toEqual({
        exec_code: 503,
        help_text: `${provider} login is not configured: set ${provider.toUpperCase()}_CLIENT_ID and ${provider.toUpperCase()}_CLIENT_SECRET`,
      });
      expect((await fetch(`${other.baseUrl}/auth/${provider}/callback?code=a&state=b`)).status).toBe(503);
    }
  });

  it("documents every WorkerAuth route with typed responses in the worker's OpenAPI", async () => {
    const document = (await (await fetch(`${worker.baseUrl}/docs/api-json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown; description?: string }> }>>;
    };
    const expected: Array<[string, string, string]> = [
      ['/validateSession', 'post', '200'],
      ['/IsValidSession', 'get', '200'],
      ['/api_user_data', 'get', '200'],
      ['/web/logoutS', 'post', '302'],
      ['/auth/refresh', 'post', '200'],
      ['/auth/{provider}/url', 'get', '200'],
      ['/auth/{provider}/callback', 'get', '200'],
      ['/auth/magic/request', 'post', '202'],
      ['/auth/magic/verify', 'get', '200'],
      ['/auth/magic/verify', 'post', '200'],
    ];
    for (const [path, method, status] of expected) {
      const operation = document.paths[path]?.[method];
      expect({ path, method, documented: Boolean(operation?.responses[status]) }).toEqual({
        path,
        method,
        documented: true,
      });
    }
    // Every success answer names its body: a DTO schema, or text/html for the pages.
    for (const [path, method, status] of expected.filter(([, , code]) => code.startsWith('2'))) {
      const typed = Boolean(document.paths[path][method].responses[status].content);
      expect({ path, method, typed }).toEqual({ path, method, typed: true });
    }
  });
});
