import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppCoreModule } from './app-core.module.js';
import { AppCoreService } from './app-core.service.js';
import { LOCAL_CALLER } from './caller.js';
import { Export, Mod } from './export.decorator.js';
import { FunctionRegistryService } from './function-registry.service.js';
import type { Result } from './result.js';

const lifecycle: string[] = [];

@Mod('CloudM')
@Injectable()
class CloudMod {
  @Export({ name: 'get_user', api: true, level: 1, samples: [{ kwargs: { name: 'ada' } }] })
  getUser(name: string) {
    return { name };
  }

  @Export({ initial: true })
  start() {
    lifecycle.push('initial');
  }

  @Export({ exitF: true })
  stop() {
    lifecycle.push('exit');
    throw new Error('ignored at shutdown');
  }
}

@Mod('CloudM')
@Injectable()
class ClashingMod {
  @Export({ name: 'get_user' })
  other() {
    return null;
  }
}

describe('AppCoreModule', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'app-core-module-'));
    Logger.overrideLogger(false); // the exit function's error is logged on purpose
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const options = () => ({
    appId: 'module-spec',
    dataDir,
    appVersion: '9.9.9',
    docsRoot: join(dataDir, 'docs'),
    sourceRoots: [join(dataDir, 'src')],
  });

  it('discovers mods of the application, runs initial and exit functions, and runs functions', async () => {
    lifecycle.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [AppCoreModule.forRoot(options())],
      providers: [CloudMod],
    }).compile();
    await moduleRef.init();
    const registry = moduleRef.get(FunctionRegistryService);
    const core = moduleRef.get(AppCoreService);
    expect(registry.list().map((item) => item.key)).toEqual(
      expect.arrayContaining([
        'CloudM.get_user',
        'core.version',
        'core.footprint',
        'core.ping',
        'docs.init',
        'docs.reader',
        'docs.writer',
        'docs.lookup',
        'docs.suggestions',
      ]),
    );
    expect(((await core.aRunFunction('core.version', { caller: LOCAL_CALLER })) as Result).get('version')).toBe(
      '9.9.9',
    );
    expect(
      core.runAny('CloudM.get_user', {
        kwargs: { name: 'ada' },
        caller: { level: 1, userId: 'ada', transport: 'http' },
      }),
    ).toEqual({ name: 'ada' });
    expect(lifecycle).toEqual(['initial']);
    await moduleRef.close();
    expect(lifecycle).toEqual(['initial', 'exit']);
  });

  it('fails at start-up when two mods register the same key, naming both', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [AppCoreModule.forRoot(options())],
      providers: [CloudMod, ClashingMod],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(
      'Function CloudM.get_user is registered twice: by CloudMod.getUser and by ClashingMod.other',
    );
  });

  it('passes the built-in test run', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [AppCoreModule.forRoot(options())],
      providers: [CloudMod],
    }).compile();
    await moduleRef.init();
    const rows = await moduleRef.get(AppCoreService).runTests({ timeoutMs: 5000 });
    expect(rows.filter((row) => row.errors > 0 || row.timeouts > 0)).toEqual([]);
    expect(rows.map((row) => `${row.module}.${row.function}`)).toEqual(
      expect.arrayContaining(['core.version', 'docs.reader', 'CloudM.get_user']),
    );
    await moduleRef.close();
  });

  describe('over HTTP', () => {
    let app: INestApplication;
    let baseUrl: string;

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({ imports: [AppCoreModule.forRoot(options())] }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      baseUrl = await app.getUrl();
    });

    afterAll(async () => {
      await app.close();
    });

    it('answers GET /api/ping with pong', async () => {
      const response = await fetch(`${baseUrl}/api/ping`);
      expect([response.status, ((await response.json()) as { status: string }).status]).toEqual([200, 'pong']);
    });

    it('answers GET /api/geo from loopback as local', async () => {
      const body = await (await fetch(`${baseUrl}/api/geo`)).json();
      expect(body).toMatchObject({ ip: '127.0.0.1', local: true, country: null });
    });
  });
});
