import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveGateway } from '../../../src/cli/gateway.command.js';
import { loadConfig } from '../../../src/config/config.js';
import { FakeOllama } from '../../fixtures/fake-ollama.js';

/** `tb gateway`: prints where it listens, and the admin key on the first start only. */
describe('tb gateway', () => {
  let dataDir: string;
  let ollama: FakeOllama;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-gateway-cli-'));
    ollama = new FakeOllama();
    await ollama.start();
  });

  afterAll(async () => {
    await ollama.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function start() {
    const printed: string[] = [];
    const io = { out: (text: string) => printed.push(text), err: (text: string) => printed.push(text), env: {} };
    const config = loadConfig(
      { DATA_DIR: dataDir, GATEWAY_PORT: '0', OLLAMA_URL: ollama.url, LOG_LEVEL: 'error' },
      { services: ['gateway'] },
    );
    const { app, url } = await serveGateway(config, io);
    return { app, url, printed };
  }

  it('prints the admin key once, keeps it in DATA_DIR/gateway/config.json, and the key works', async () => {
    const first = await start();
    try {
      expect(first.printed[0]).toMatch(/^Gateway ready at http:\/\/127\.0\.0\.1:\d+\/v1/);
      const key = /Admin key \(shown once; it stays in .*config\.json\): (sk-tb-[0-9a-f]{48})$/.exec(
        first.printed[1] ?? '',
      )?.[1];
      expect(key).toBeDefined();
      const file = JSON.parse(await readFile(join(dataDir, 'gateway', 'config.json'), 'utf8')) as {
        admin_key: string;
        ollama_url: string;
      };
      expect(file).toMatchObject({ admin_key: key, ollama_url: ollama.url });
      const models = await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(models.status).toBe(200);
    } finally {
      await first.app.close();
    }
    const second = await start();
    try {
      expect(second.printed).toHaveLength(1);
      expect(second.printed.join('\n')).not.toContain('sk-tb-');
    } finally {
      await second.app.close();
    }
  });
});
