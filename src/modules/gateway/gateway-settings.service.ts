import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { writeFileAtomically } from '../../common/atomic-write.js';
import { PlatformError } from '../../common/errors.js';
import { PLATFORM_CONFIG } from '../../config/config.module.js';
import type { PlatformConfig } from '../../config/config.js';
import { ModelCatalog } from './model-catalog.js';
import { OllamaClient } from './ollama/ollama-client.js';
import { loadOrCreateSettings, validateSettings, type GatewaySettings } from './gateway-settings.js';

/** How often each process looks for a change of the file made by another process (or by hand). */
const RELOAD_INTERVAL_MS = 1000;
/** What GET /admin/api/config shows instead of a secret. */
export const MASK = '********';

export function maskSecret(secret: string | null): string | null {
  return secret ? `${MASK}${secret.slice(-4)}` : null;
}

/** The gateway's settings file and what hangs off it: the runtime client and the model catalog. */
@Injectable()
export class GatewaySettingsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Gateway');
  private current: GatewaySettings | null = null;
  /** Whether this start created the settings file (and so a new admin key, which `tb gateway` prints once). */
  createdOnStart = false;
  private ollama: OllamaClient | null = null;
  private loadedMtimeMs = 0;
  private reloadTimer: NodeJS.Timeout | null = null;
  readonly catalog: ModelCatalog;
  readonly path: string;

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {
    this.path = join(config.dataDir, 'gateway', 'config.json');
    this.catalog = new ModelCatalog(
      () => this.client,
      () => this.settings.model_types,
      config.gateway.modelCacheSeconds,
    );
  }

  async onModuleInit(): Promise<void> {
    const initial = this.config.gateway.ollamaUrl ? { ollama_url: this.config.gateway.ollamaUrl } : {};
    const { settings, created } = await loadOrCreateSettings(this.path, initial);
    this.current = settings;
    this.createdOnStart = created;
    this.loadedMtimeMs = (await stat(this.path)).mtimeMs;
    // The key itself is printed once by `tb gateway` on its own output, never into the logs.
    if (created) this.logger.log(`created ${this.path} with a new admin key`);
    this.reloadTimer = setInterval(() => void this.reloadIfChanged(), RELOAD_INTERVAL_MS);
    this.reloadTimer.unref();
  }

  onModuleDestroy(): void {
    if (this.reloadTimer) clearInterval(this.reloadTimer);
  }

  /** Picks up a change written by another gateway process; a broken file is reported and ignored. */
  async reloadIfChanged(): Promise<void> {
    try {
      const { mtimeMs } = await stat(this.path);
      if (mtimeMs === this.loadedMtimeMs) return;
      this.current = validateSettings(JSON.parse(await readFile(this.path, 'utf8')));
      this.loadedMtimeMs = mtimeMs;
      this.catalog.invalidate();
    } catch (error) {
      this.logger.warn(`kept the previous settings: ${this.path} could not be used (${(error as Error).message})`);
    }
  }

  /** The settings as an admin sees them: secrets masked. */
  masked(): Record<string, unknown> {
    const settings = this.settings;
    return { ...settings, admin_key: maskSecret(settings.admin_key), hf_token: maskSecret(settings.hf_token) };
  }

  /**
   * Applies an admin's change: `replace` takes the whole object (PUT), otherwise top-level keys are merged
   * (PATCH; object values such as `rate_limits` merge one level deep). The admin key is not changed here
   * (edit the file), a masked secret sent back unchanged keeps its value. Validated whole, then written
   * atomically, so every process reads either the old or the new file.
   */
  async update(change: unknown, replace: boolean): Promise<Record<string, unknown>> {
    if (typeof change !== 'object' || change === null || Array.isArray(change)) {
      throw new PlatformError('BAD_REQUEST', 'The configuration must be a JSON object');
    }
    const input = { ...(change as Record<string, unknown>) };
    const current = this.settings;
    const unknown = Object.keys(input).filter((key) => !(key in current));
    if (unknown.length > 0) {
      throw new PlatformError('BAD_REQUEST', `Unknown configuration key(s): ${unknown.join(', ')}`, [
        { field: unknown[0], message: 'unknown key' },
      ]);
    }
    if (
      input.admin_key !== undefined &&
      input.admin_key !== maskSecret(current.admin_key) &&
      input.admin_key !== current.admin_key
    ) {
      throw new PlatformError('BAD_REQUEST', `admin_key cannot be changed through the API; edit ${this.path}`, [
        { field: 'admin_key', message: 'read-only' },
      ]);
    }
    delete input.admin_key;
    if (typeof input.hf_token === 'string' && input.hf_token.startsWith(MASK)) delete input.hf_token;
    let next: Record<string, unknown>;
    if (replace)
      next = {
        ...input,
        admin_key: current.admin_key,
        ...(input.hf_token === undefined ? { hf_token: current.hf_token } : {}),
      };
    else {
      next = { ...current };
      for (const [key, value] of Object.entries(input)) {
        const existing = (current as unknown as Record<string, unknown>)[key];
        next[key] =
          isPlainObject(value) &&
          isPlainObject(existing) &&
          !['model_types', 'model_prices', 'loaded_models'].includes(key)
            ? { ...existing, ...value }
            : value;
      }
    }
    const settings = validateSettings(next);
    await writeFileAtomically(this.path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
    this.current = settings;
    this.loadedMtimeMs = (await stat(this.path)).mtimeMs;
    this.catalog.invalidate();
    return this.masked();
  }

  get settings(): GatewaySettings {
    if (!this.current) throw new Error('GatewaySettingsService used before the module initialised');
    return this.current;
  }

  /** OLLAMA_URL, when set, wins over the file's `ollama_url`. */
  get ollamaUrl(): string {
    return this.config.gateway.ollamaUrl ?? this.settings.ollama_url;
  }

  get client(): OllamaClient {
    if (!this.ollama || this.ollama.baseUrl !== this.ollamaUrl) this.ollama = new OllamaClient(this.ollamaUrl);
    return this.ollama;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
