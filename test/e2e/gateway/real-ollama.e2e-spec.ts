import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import OpenAI from 'openai';
import { createHttpApp } from '../../../src/apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../../../src/apps/gateway.app-module.js';
import { loadConfig } from '../../../src/config/config.js';
import { defaultSettings } from '../../../src/modules/gateway/gateway-settings.js';

/**
 * Opt-in: the same SDK checks against a real Ollama. Set TEST_OLLAMA_URL (e.g. http://127.0.0.1:11434)
 * and TEST_OLLAMA_MODEL (a small chat model it has, e.g. qwen3:0.6b); TEST_OLLAMA_EMBED_MODEL adds the
 * embeddings check. Unset, the suite is skipped; set but unreachable, it fails.
 */
const ollamaUrl = process.env.TEST_OLLAMA_URL;
const model = process.env.TEST_OLLAMA_MODEL;
const embedModel = process.env.TEST_OLLAMA_EMBED_MODEL;

(ollamaUrl && model ? describe : describe.skip)('gateway against a real Ollama', () => {
  let app: INestApplication;
  let client: OpenAI;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-gateway-real-'));
    const settings = defaultSettings();
    await mkdir(join(dataDir, 'gateway'), { recursive: true });
    await writeFile(join(dataDir, 'gateway', 'config.json'), JSON.stringify(settings));
    const config = loadConfig(
      { DATA_DIR: dataDir, OLLAMA_URL: ollamaUrl!, GATEWAY_PORT: '0' },
      { services: ['gateway'] },
    );
    app = await createHttpApp(GatewayAppModule.forRoot(config), {
      ...gatewayHttpAppOptions(config),
      logger: ['error'],
    });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    client = new OpenAI({
      apiKey: settings.admin_key,
      baseURL: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0,
      timeout: 300_000,
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lists the model', async () => {
    const ids = [];
    for await (const entry of client.models.list()) ids.push(entry.id);
    expect(ids.some((id) => id === model || id === `${model}:latest`)).toBe(true);
  });

  it('answers a chat with the runtime’s token counts', async () => {
    const completion = await client.chat.completions.create({
      model: model!,
      messages: [{ role: 'user', content: 'Say hello in one word.' }],
      max_tokens: 32,
    });
    expect(completion.choices[0].message.role).toBe('assistant');
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  }, 300_000);

  it('streams with a final usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: model!,
      messages: [{ role: 'user', content: 'Count to three.' }],
      max_tokens: 32,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    expect(chunks.at(-2)?.choices[0].finish_reason).toMatch(/stop|length/);
  }, 300_000);

  (embedModel ? it : it.skip)(
    'embeds text',
    async () => {
      const result = await client.embeddings.create({ model: embedModel!, input: ['hello', 'world'] });
      expect(result.data).toHaveLength(2);
      expect(result.data[0].embedding.length).toBeGreaterThan(0);
      expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    },
    300_000,
  );
});
