import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backends } from '../../support/backends.js';
import { spawnHttpWorker, type SpawnedHttpWorker } from '../../support/worker-under-test.js';

const RECORDER = fileURLToPath(new URL('../../support/module-load-recorder.mjs', import.meta.url));

/**
 * Libraries an HTTP worker needs only for a request some workers never get (a passkey ceremony, a mail, a geo
 * lookup) or for a terminal it does not have (pretty logs): each loads on first use, so a new worker in a rolling
 * update starts on less CPU.
 */
const LOADED_ON_FIRST_USE = ['@simplewebauthn/server', 'nodemailer', 'maxmind', 'pino-pretty'];

describe.each(backends())('HTTP worker start: what it loads ($name)', (backend) => {
  let workspace: string;
  let dispose: () => Promise<void>;
  let worker: SpawnedHttpWorker;
  let loaded: string[];

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-footprint-'));
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    const log = join(workspace, 'modules.log');
    worker = await spawnHttpWorker(
      {
        DATA_DIR: workspace,
        // A configured mailer still loads nodemailer only for its first mail.
        SMTP_URL: 'smtp://user:pass@127.0.0.1:2525',
        TB_TEST_MODULE_LOG: log,
        ...provisioned.env,
      },
      [],
      ['--import', RECORDER],
    );
    expect((await fetch(`${worker.baseUrl}/health`)).status).toBe(200);
    loaded = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  });
  afterAll(async () => {
    worker?.kill();
    await dispose?.();
    await rm(workspace, { recursive: true, force: true });
  });

  it('records what the worker loaded (Nest, TypeORM, its own modules)', () => {
    for (const part of ['/node_modules/@nestjs/core/', '/node_modules/typeorm/', '/src/modules/http-worker/'])
      expect(loaded.some((url) => url.includes(part))).toBe(true);
  });

  it.each(LOADED_ON_FIRST_USE)('does not load %s before /health answers 200', (name) => {
    expect(loaded.filter((url) => url.includes(`/node_modules/${name}/`))).toEqual([]);
  });

  it('still serves its OpenAPI document, built on the first request for it', async () => {
    const response = await fetch(`${worker.baseUrl}/docs/api-json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { info: { title: string }; paths: Record<string, unknown> };
    expect(document.info.title).toBe('Toolbox Platform — HTTP worker');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/health', '/metrics']));
  });
});
