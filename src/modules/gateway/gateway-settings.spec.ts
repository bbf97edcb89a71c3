import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSettings, generateGatewayKey, loadOrCreateSettings, validateSettings } from './gateway-settings.js';

describe('generateGatewayKey', () => {
  it('makes sk-tb- and 48 hex characters, different every time', () => {
    const keys = new Set(Array.from({ length: 100 }, generateGatewayKey));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(/^sk-tb-[0-9a-f]{48}$/);
  });
});

describe('validateSettings', () => {
  it('fills defaults and trims the runtime URL', () => {
    const settings = validateSettings({ admin_key: 'k'.repeat(32), ollama_url: 'http://gpu:11434/' });
    expect(settings).toMatchObject({
      ollama_url: 'http://gpu:11434',
      backend_mode: 'bare',
      rate_limits: { payg: 5, sub: 10 },
      fallback_models: { chat: null, vision: null, audio: null, embedding: null },
      reserve_tokens: 1024,
    });
  });

  it('lists every problem at once', () => {
    let message = '';
    try {
      validateSettings({
        admin_key: 'short',
        ollama_url: 'ftp://x',
        backend_mode: 'k8s',
        rate_limits: { payg: 0 },
        fallback_models: { smell: 'x', vision: '' },
        model_types: { a: 'robot' },
        prices: { input_per_1k: -1, output_per_1k: 1 },
        reserve_tokens: 1.5,
      });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const part of [
      'ollama_url',
      'backend_mode',
      'admin_key',
      'rate_limits.payg',
      'fallback_models.smell',
      'fallback_models.vision',
      'model_types.a',
      'prices.input_per_1k',
      'reserve_tokens',
    ]) {
      expect(message).toContain(part);
    }
  });
});

describe('loadOrCreateSettings', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'tb-gateway-settings-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('creates the file once with a new admin key, mode 0600, and reads it afterwards', async () => {
    const path = join(directory, 'gateway', 'config.json');
    const first = await loadOrCreateSettings(path, { ollama_url: 'http://x:1' });
    expect(first.created).toBe(true);
    expect(first.settings.ollama_url).toBe('http://x:1');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateSettings(path);
    expect(second).toEqual({ settings: first.settings, created: false });
  });

  it('lets processes starting together agree on one admin key', async () => {
    const path = join(directory, 'config.json');
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSettings(path)));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.settings.admin_key)).size).toBe(1);
    expect(JSON.parse(await readFile(path, 'utf8')).admin_key).toBe(results[0].settings.admin_key);
  });

  it('refuses a file that is not JSON instead of replacing it', async () => {
    const path = join(directory, 'config.json');
    await loadOrCreateSettings(path);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path, '{ broken');
    await expect(loadOrCreateSettings(path)).rejects.toThrow('is not valid JSON');
    expect(defaultSettings().admin_key).not.toBe('');
  });
});
