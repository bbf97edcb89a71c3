import { randomBytes, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PlatformError } from '../../common/errors.js';
import type { TokenPrice } from './accounts/money.js';
import { MODEL_NEEDS, MODEL_TYPES, type ModelNeed, type ModelType } from './model-routing.js';

/**
 * The gateway's own configuration file, `DATA_DIR/gateway/config.json` (the original gateway's keys: ollama_url,
 * backend_mode, admin_key, hf_token, rate_limits), plus the routing settings: a fallback model per need
 * and a type override per model. Created on first start with a new admin key.
 */
export interface GatewaySettings {
  ollama_url: string;
  backend_mode: 'bare' | 'docker';
  admin_key: string;
  hf_token: string | null;
  rate_limits: { payg: number; sub: number };
  /** The model that answers when the requested one cannot (an image to a text model); null: a 400 instead. */
  fallback_models: Record<ModelNeed, string | null>;
  /** Admin overrides of a model's detected type. */
  model_types: Record<string, ModelType>;
  /** What PAYG users pay per 1,000 tokens, unless `model_prices` names the model. */
  prices: TokenPrice;
  model_prices: Record<string, TokenPrice>;
  /**
   * Completion tokens held from a PAYG balance while a call without `max_tokens` runs; the exact cost
   * settles afterwards. Holding is what stops parallel calls from spending the same balance twice.
   */
  reserve_tokens: number;
  /** The gateway's model slots: models kept loaded (and loaded again when the gateway starts). */
  loaded_models: Record<string, { keep_alive: string | number }>;
}

/** The settings without the admin key: what the shared database row holds and what the gateway reads at run time. */
export type GatewayOptions = Omit<GatewaySettings, 'admin_key'>;

export const DEFAULT_OLLAMA_URL = 'http://127.0.0.1:11434';

/** `sk-tb-` and 48 hex characters (192 random bits), the gateway's key format for users and the admin. */
export function generateGatewayKey(): string {
  return `sk-tb-${randomBytes(24).toString('hex')}`;
}

export function defaultSettings(): GatewaySettings {
  return {
    ollama_url: DEFAULT_OLLAMA_URL,
    backend_mode: 'bare',
    admin_key: generateGatewayKey(),
    hf_token: null,
    rate_limits: { payg: 5, sub: 10 },
    fallback_models: { chat: null, vision: null, audio: null, embedding: null },
    model_types: {},
    prices: { input_per_1k: 0.0005, output_per_1k: 0.0015 },
    model_prices: {},
    reserve_tokens: 1024,
    loaded_models: {},
  };
}

function priceProblems(value: unknown, path: string): string[] {
  if (!isObject(value)) return [`${path} must be {input_per_1k, output_per_1k}`];
  return (['input_per_1k', 'output_per_1k'] as const)
    .filter((key) => typeof value[key] !== 'number' || !Number.isFinite(value[key]) || (value[key] as number) < 0)
    .map((key) => `${path}.${key} must be a number of at least 0`);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks a whole settings file (the settings and the admin key, or an admin's change merged into it); lists every problem. */
export function validateSettings(value: unknown): GatewaySettings {
  return checkSettings(value, true) as GatewaySettings;
}

/** Checks the settings without the admin key (the database row keeps only the key's hash). */
export function validateOptions(value: unknown): GatewayOptions {
  const { admin_key: _adminKey, ...options } = checkSettings(value, false);
  return options;
}

function checkSettings(value: unknown, withAdminKey: boolean): GatewayOptions & { admin_key?: string } {
  const problems: string[] = [];
  const base = defaultSettings();
  if (!isObject(value)) throw new PlatformError('BAD_REQUEST', 'The gateway configuration must be a JSON object');
  const url = value.ollama_url ?? base.ollama_url;
  if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/.test(url)) problems.push('ollama_url must be an http(s) URL');
  const mode = value.backend_mode ?? base.backend_mode;
  if (mode !== 'bare' && mode !== 'docker') problems.push('backend_mode must be bare or docker');
  const adminKey = value.admin_key;
  if (withAdminKey && (typeof adminKey !== 'string' || adminKey.length < 32))
    problems.push('admin_key must be at least 32 characters');
  const hfToken = value.hf_token ?? null;
  if (hfToken !== null && typeof hfToken !== 'string') problems.push('hf_token must be a string or null');
  const limits = isObject(value.rate_limits) ? { ...base.rate_limits, ...value.rate_limits } : base.rate_limits;
  for (const tier of ['payg', 'sub'] as const) {
    const limit = limits[tier];
    if (!Number.isInteger(limit) || limit < 1)
      problems.push(`rate_limits.${tier} must be a whole number of at least 1`);
  }
  const fallbacks = { ...base.fallback_models, ...(isObject(value.fallback_models) ? value.fallback_models : {}) };
  for (const [need, model] of Object.entries(fallbacks)) {
    if (!MODEL_NEEDS.includes(need as ModelNeed))
      problems.push(`fallback_models.${need}: unknown need (${MODEL_NEEDS.join(', ')})`);
    else if (model !== null && (typeof model !== 'string' || !model.trim()))
      problems.push(`fallback_models.${need} must be a model name or null`);
  }
  const types = isObject(value.model_types) ? value.model_types : {};
  for (const [model, type] of Object.entries(types)) {
    if (!MODEL_TYPES.includes(type as ModelType))
      problems.push(`model_types.${model} must be one of ${MODEL_TYPES.join(', ')}`);
  }
  const prices = value.prices ?? base.prices;
  problems.push(...priceProblems(prices, 'prices'));
  const modelPrices = isObject(value.model_prices) ? value.model_prices : {};
  for (const [model, price] of Object.entries(modelPrices))
    problems.push(...priceProblems(price, `model_prices.${model}`));
  const reserve = value.reserve_tokens ?? base.reserve_tokens;
  if (!Number.isInteger(reserve) || (reserve as number) < 0)
    problems.push('reserve_tokens must be a whole number of at least 0');
  const slots = isObject(value.loaded_models) ? value.loaded_models : {};
  for (const [model, slot] of Object.entries(slots)) {
    const keepAlive = isObject(slot) ? slot.keep_alive : undefined;
    if (typeof keepAlive !== 'string' && typeof keepAlive !== 'number') {
      problems.push(`loaded_models.${model} must be {keep_alive: "30m" or a number of seconds}`);
    }
  }
  if (problems.length > 0) {
    throw new PlatformError(
      'BAD_REQUEST',
      `Invalid gateway configuration: ${problems.join('; ')}`,
      problems.map((problem) => ({ field: problem.split(' ')[0], message: problem })),
    );
  }
  return {
    ollama_url: (url as string).replace(/\/+$/, ''),
    backend_mode: mode as GatewaySettings['backend_mode'],
    ...(withAdminKey ? { admin_key: adminKey as string } : {}),
    hf_token: hfToken as string | null,
    rate_limits: { payg: limits.payg as number, sub: limits.sub as number },
    fallback_models: fallbacks as GatewaySettings['fallback_models'],
    model_types: types as GatewaySettings['model_types'],
    prices: prices as TokenPrice,
    model_prices: modelPrices as Record<string, TokenPrice>,
    reserve_tokens: reserve as number,
    loaded_models: slots as GatewaySettings['loaded_models'],
  };
}

/**
 * Reads the settings file, creating it on first start. Creation is exclusive (a hard link of a complete
 * temporary file, which fails when the file exists), so processes starting together agree on one admin
 * key. Returns whether this call created the file, so the caller prints the new key once.
 */
export async function loadOrCreateSettings(
  path: string,
  initial: Partial<GatewaySettings> = {},
): Promise<{ settings: GatewaySettings; created: boolean }> {
  try {
    return { settings: validateSettings(JSON.parse(await readFile(path, 'utf8'))), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (error instanceof SyntaxError) throw new Error(`${path} is not valid JSON: ${error.message}`);
      throw error;
    }
  }
  const settings = { ...defaultSettings(), ...initial };
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  try {
    await link(temporary, path);
    return { settings, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { settings: validateSettings(JSON.parse(await readFile(path, 'utf8'))), created: false };
  } finally {
    await rm(temporary, { force: true });
  }
}
