import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, HttpCode, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Response } from 'express';
import { ACCESS_LEVEL } from '../../../src/auth/access-level.js';
import { Public, RequireLevel } from '../../../src/auth/access.decorators.js';
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

/** A service as a worker composes it: JWTs and session cookies (key strategies are tested with their products). */
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
        // In the workers' order: the cookie first.
        AuthModule.forRoot({ strategies: ['session-cookie', 'jwt'], sessionCookie: { secure: false } }),
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

  const sessions = () => first.app.get(SessionCookies);

  it('states each route with the service strategies, permission and level', () => {
    expect(declaredRouteAccess(first.app)).toEqual({
      'GET /probe/open': 'session-cookie|jwt: public',
      'GET /probe/whoami': 'session-cookie|jwt: authenticated',
      'GET /probe/trusted': 'session-cookie|jwt: level TRUSTED',
      'POST /probe/logout': 'session-cookie|jwt: level LOGGED_IN',
    });
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

  it('refuses a forged bearer token with 401 even when a live session cookie comes with it', async () => {
    const session = sessions().issue({ userId: 'worker-user', username: 'wanda', level: 1 });
    const response = await first.api.get('/probe/whoami', {
      cookie: `tb_session=${session.token}`,
      authorization: `Bearer ${forgeJwt({ sub: 'mallory', exp: inAnHour() }, 'not-the-platform-secret-0123456789')}`,
    });
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe('Authentication failed: invalid token');
  });

  it('refuses an expired bearer token with 401 even when a live session cookie comes with it', async () => {
    const session = sessions().issue({ userId: 'worker-user', username: 'wanda', level: 1 });
    const response = await first.api.get('/probe/whoami', {
      cookie: `tb_session=${session.token}`,
      authorization: `Bearer ${forgeJwt({ sub: 'worker-user', exp: Math.floor(Date.now() / 1000) - 60 }, TEST_SECRET)}`,
    });
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe('Authentication failed: token expired');
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
  }
});
