import 'reflect-metadata';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import OpenAI from 'openai';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../../src/apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../../src/apps/gateway.app-module.js';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { defaultSettings, type GatewaySettings } from '../../src/modules/gateway/gateway-settings.js';
import { FakeOllama, type FakeModel } from '../fixtures/fake-ollama.js';
import type { Backend } from './backends.js';

export interface GatewayUnderTest {
  baseUrl: string;
  app: INestApplication;
  config: PlatformConfig;
  /** The environment the gateway was configured from: another `tb gateway` process started with it shares everything. */
  env: Record<string, string>;
  dataDir: string;
  ollama: FakeOllama;
  adminKey: string;
  /** The official SDK pointed at the gateway (no retries unless asked, so a test sees the first answer). */
  openai(apiKey?: string, options?: { maxRetries?: number }): OpenAI;
  /** A plain JSON call (admin and user APIs), with the admin key unless another is given. */
  call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    apiKey?: string,
  ): Promise<{ status: number; body: T; headers: Headers }>;
  /** The settings as stored: the file, or the shared database row (GATEWAY_SETTINGS_STORE), with the secrets as kept. */
  storedSettings(): Promise<Record<string, unknown>>;
  /** A second gateway process on the same database, Redis and data directory (shared limits and balances). */
  anotherInstance(): Promise<{ baseUrl: string; close(): Promise<void> }>;
  close(): Promise<void>;
}

/**
 * Starts a fake Ollama and the gateway in front of it on free ports, with a fresh data directory whose
 * `gateway/config.json` is written first (as an operator would), so the admin key and fallbacks are known.
 */
export async function startGateway(
  backend: Backend,
  options: { settings?: Partial<GatewaySettings>; models?: FakeModel[]; env?: Record<string, string> } = {},
): Promise<GatewayUnderTest> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-gateway-'));
  const provisioned = await backend.provision();
  const ollama = new FakeOllama(options.models);
  const ollamaUrl = await ollama.start();
  const settings = { ...defaultSettings(), ...options.settings };
  await mkdir(join(dataDir, 'gateway'), { recursive: true });
  await writeFile(join(dataDir, 'gateway', 'config.json'), JSON.stringify(settings, null, 2));
  const env = { DATA_DIR: dataDir, OLLAMA_URL: ollamaUrl, GATEWAY_PORT: '0', ...provisioned.env, ...options.env };
  const config = loadConfig(env, { services: ['gateway'] });
  const boot = async () => {
    const instance = await createHttpApp(GatewayAppModule.forRoot(config), {
      ...gatewayHttpAppOptions(config),
      logger: ['error'],
    });
    await instance.listen(0, '127.0.0.1');
    const { port } = instance.getHttpServer().address() as { port: number };
    return { instance, url: `http://127.0.0.1:${port}` };
  };
  const { instance: app, url: baseUrl } = await boot();
  const others: INestApplication[] = [];
  return {
    baseUrl,
    app,
    config,
    env,
    dataDir,
    ollama,
    adminKey: settings.admin_key,
    openai: (apiKey = settings.admin_key, clientOptions = {}) =>
      new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: clientOptions.maxRetries ?? 0, timeout: 20_000 }),
    async call<T>(method: string, path: string, body?: unknown, apiKey = settings.admin_key) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
    },
    async storedSettings() {
      if (config.gateway.settingsStore === 'file')
        return JSON.parse(await readFile(join(dataDir, 'gateway', 'config.json'), 'utf8')) as Record<string, unknown>;
      const [row] = (await app.get(DataSource).query('SELECT settings FROM gateway_settings')) as {
        settings: string;
      }[];
      return JSON.parse(row.settings) as Record<string, unknown>;
    },
    async anotherInstance() {
      const { instance, url } = await boot();
      others.push(instance);
      return { baseUrl: url, close: () => instance.close() };
    },
    async close() {
      for (const other of others) await other.close().catch(() => undefined);
      await app.close();
      await ollama.stop();
      await provisioned.dispose();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Sends `count` identical chat calls at once: those served, and those refused with 402 (no balance left). */
export async function parallelChats(
  client: OpenAI,
  count: number,
  body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
): Promise<{ served: OpenAI.Chat.Completions.ChatCompletion[]; refused: number }> {
  const results = await Promise.allSettled(Array.from({ length: count }, () => client.chat.completions.create(body)));
  return {
    served: results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
    refused: results.filter(
      (result) =>
        result.status === 'rejected' && (result.reason as InstanceType<typeof OpenAI.APIError>).status === 402,
    ).length,
  };
}
