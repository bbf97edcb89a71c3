import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, HttpCode, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Response } from 'express';
import { ACCESS_LEVEL } from '../../../src/auth/access-level.js';
import { Public, RequireLevel, RequirePermission } from '../../../src/auth/access.decorators.js';
import { ApiKeysService } from '../../../src/auth/api-keys/api-keys.service.js';
import { AuthModule } from '../../../src/auth/auth.module.js';
import type { AuthenticatedRequest } from '../../../src/auth/principal.js';
import { SessionCookies } from '../../../src/auth/session-cookie/session-cookies.js';
import { PlatformExceptionFilter } from '../../../src/common/exception.filter.js';
import { ConfigModule } from '../../../src/config/config.module.js';
import { loadConfig } from '../../../src/config/config.js';
import { CountersModule } from '../../../src/counters/counters.module.js';
import { DatabaseModule } from '../../../src/database/database.module.js';
import { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { forgeJwt, inAnHour } from '../../support/auth-fixtures.js';
import { declaredRouteAccess } from '../../support/route-access.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';

/** A service as the MCP transport or a worker would compose it: API keys, JWTs and session cookies. */
@Controller('probe')
class ProbeController {
  constructor(private readonly sessions: SessionCookies) {}

  @Public()
  @Get('open')
  open(@Req() request: AuthenticatedRequest) {
    return { strategy: request.principal?.strategy ?? null };
  }

  @Get('whoami')
  whoami(@Req() request: AuthenticatedRequest) {
    const { platformUserId, level, permissions, strategy } = request.principal!;
    return { user: platformUserId, level, permissions, strategy };
  }

  @RequirePermission('execute')
  @Post('execute')
  @HttpCode(200)
  execute() {
    return { executed: true };
  }

  @RequireLevel(ACCESS_LEVEL.TRUSTED)
  @Get('trusted')
  trusted() {
    return { trusted: true };
  }

  @RequireLevel(ACCESS_LEVEL.LOGGED_IN)
  @Post('logout')
  @HttpCode(200)
  async logout(@Req() request: AuthenticatedRequest, @Res({ passthrough: true }) response: Response) {
    await this.sessions.revoke(request.principal!);
    response.setHeader('Set-Cookie', this.sessions.clearCookie());
    return { logged_out: true };
  }
}

describe.each(backends())('auth strategies on $name', (backend) => {
  const apps: INestApplication[] = [];
  let dataDir: string;
  let dispose: () => Promise<void>;
  let env: Record<string, string>;
  let first: { app: INestApplication; api: ApiClient };

  async function start() {
    const config = loadConfig({
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      ...env,
    });
    @Module({
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        AuthModule.forRoot({ strategies: ['api-key', 'jwt', 'session-cookie'], sessionCookie: { secure: false } }),
      ],
      controllers: [ProbeController],
    })
    class ProbeServiceModule {}
    const app = await NestFactory.create(ProbeServiceModule, { logger: ['error'] });
    app.useGlobalFilters(new PlatformExceptionFilter());
    await app.listen(0, '127.0.0.1');
    apps.push(app);
    const { port } = app.getHttpServer().address() as { port: number };
    return { app, api: new ApiClient(`http://127.0.0.1:${port}`) };
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-auth-e2e-'));
    const provisioned = await backend.provision();
    env = provisioned.env;
    dispose = provisioned.dispose;
    first = await start();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await dispose?.();
    await rm(dataDir, { recursive: true, force: true });
  });

  const keys = () => first.app.get(ApiKeysService);
  const sessions = () => first.app.get(SessionCookies);

  it('states each route with the service strategies, permission and level', () => {
    expect(declaredRouteAccess(first.app)).toEqual({
      'GET /probe/open': 'api-key|jwt|session-cookie: public',
      'GET /probe/whoami': 'api-key|jwt|session-cookie: authenticated',
      'POST /probe/execute': 'api-key|jwt|session-cookie: permission execute',
      'GET /probe/trusted': 'api-key|jwt|session-cookie: level TRUSTED',
      'POST /probe/logout': 'api-key|jwt|session-cookie: level LOGGED_IN',
    });
  });

  it('identifies an API key sent as X-API-Key, with its permissions and level', async () => {
    const { key } = await keys().create({
      owner: 'mcp-user',
      name: 'x-header',
      permissions: ['read', 'execute'],
      level: 2,
    });
    const response = await first.api.get('/probe/whoami', { 'x-api-key': key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      user: 'mcp-user',
      level: 2,
      permissions: ['read', 'execute'],
      strategy: 'api-key',
    });
  });

  it('identifies an API key sent as Authorization: Bearer', async () => {
    const { key } = await keys().create({ owner: 'gateway-user', name: 'sdk' });
    const response = await first.api.get('/probe/whoami', { authorization: `Bearer ${key}` });
    expect(response.status).toBe(200);
    expect(response.body.strategy).toBe('api-key');
  });

  it('stores the key hashed: the listing holds neither the key nor its hash', async () => {
    const { key } = await keys().create({ owner: 'lister', name: 'listed' });
    const listed = await keys().list({ owner: 'lister' });
    expect(listed).toHaveLength(1);
    expect(listed[0].keyPrefix).toBe(key.slice(0, 12));
    expect(JSON.stringify(listed)).not.toContain(key.slice(12));
  });

  it('refuses a revoked key with 401 on the next request', async () => {
    const { key } = await keys().create({ owner: 'revoker', name: 'short-lived' });
    expect((await first.api.get('/probe/whoami', { 'x-api-key': key })).status).toBe(200);
    await keys().revoke({ owner: 'revoker', name: 'short-lived' });
    const response = await first.api.get('/probe/whoami', { 'x-api-key': key });
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe('Authentication failed: API key revoked');
  });

  it('answers 403 naming the permission a key lacks', async () => {
    const { key } = await keys().create({ owner: 'reader', name: 'read-only', permissions: ['read'] });
    const response = await first.api.post('/probe/execute', {}, { 'x-api-key': key });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringContaining('Permission "execute" required'),
    });
  });

  it('admits a key with the permission', async () => {
    const { key } = await keys().create({ owner: 'runner', name: 'exec', permissions: ['execute'] });
    const response = await first.api.post('/probe/execute', {}, { 'x-api-key': key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ executed: true });
  });

  it('applies the level rule to JWTs: TRUSTED and ADMIN pass a TRUSTED route, LOGGED_IN does not', async () => {
    const as = (level: number) =>
      first.api.get('/probe/trusted', {
        authorization: `Bearer ${forgeJwt({ sub: `level-${level}`, level, exp: inAnHour() }, TEST_SECRET)}`,
      });
    expect([(await as(2)).status, (await as(-1)).status, (await as(1)).status]).toEqual([200, 200, 403]);
  });

  it('identifies a session cookie and refuses it after logout', async () => {
    const session = sessions().issue({ userId: 'worker-user', username: 'wanda', level: 1 });
    const cookie = { cookie: `tb_session=${session.token}` };
    expect((await first.api.get('/probe/whoami', cookie)).body).toMatchObject({
      user: 'worker-user',
      strategy: 'session-cookie',
    });
    const logout = await first.api.post('/probe/logout', {}, cookie);
    expect(logout.status).toBe(200);
    expect(logout.headers.get('set-cookie')).toMatch(/^tb_session=; Max-Age=0/);
    const after = await first.api.get('/probe/whoami', cookie);
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('Authentication failed: session ended (logged out)');
  });

  it('refuses a tampered session cookie with 401 even on a public route', async () => {
    const token = sessions().issue({ userId: 'worker-user', username: 'wanda', level: 1 }).token;
    const at = token.length - 10;
    const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    const response = await first.api.get('/probe/open', { cookie: `tb_session=${tampered}` });
    expect(response.status).toBe(401);
  });

  if (backend.name === 'mysql+redis') {
    it('ends a session on every instance sharing Redis when one instance logs it out', async () => {
      const second = await start();
      const session = sessions().issue({ userId: 'cluster-user', username: 'cleo', level: 2 });
      const cookie = { cookie: `tb_session=${session.token}` };
      expect((await second.api.get('/probe/whoami', cookie)).status).toBe(200);
      expect((await first.api.post('/probe/logout', {}, cookie)).status).toBe(200);
      expect((await second.api.get('/probe/whoami', cookie)).status).toBe(401);
    });

    it('verifies on one instance an API key created on another (keys live in the database)', async () => {
      const second = await start();
      const { key } = await second.app.get(ApiKeysService).create({ owner: 'shared', name: 'across' });
      expect((await first.api.get('/probe/whoami', { 'x-api-key': key })).body.user).toBe('shared');
    });
  }
});
