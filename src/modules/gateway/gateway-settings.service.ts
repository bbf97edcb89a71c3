import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { LocalMessageBroker, MESSAGE_BROKER, type MessageBroker } from '../../broker/index.js';
import { writeFileAtomically } from '../../common/atomic-write.js';
import { PlatformError } from '../../common/errors.js';
import { GATEWAY_CONFIG, INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { GatewayConfig, InfrastructureConfig } from '../../config/config.js';
import { GatewaySettingsEntity } from './entities/gateway-settings.entity.js';
import { ModelCatalog } from './model-catalog.js';
import { OllamaClient } from './ollama/ollama-client.js';
import {
  defaultSettings,
  generateGatewayKey,
  loadOrCreateSettings,
  validateOptions,
  validateSettings,
  type GatewayOptions,
} from './gateway-settings.js';

/** How often each process looks for a change made by another process (the file's mtime, the row's version). */
const RELOAD_INTERVAL_MS = 1000;
/** The one row of `gateway_settings`. */
const ROW_ID = 'gateway';
/** Announces a change of the shared row, so every node reads it again at once (the poll above is the backstop). */
const SETTINGS_TOPIC = 'gateway.settings';
/** What GET /admin/api/config shows instead of a secret. */
export const MASK = '********';

export function maskSecret(secret: string | null): string | null {
  return secret ? `${MASK}${secret.slice(-4)}` : null;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** What the admin key is checked against and shown as: its SHA-256 and its last four characters. */
interface AdminKey {
  digest: Buffer;
  hint: string;
}

/**
 * The gateway's settings and what hangs off them: the runtime client and the model catalog. Kept in
 * `DATA_DIR/gateway/config.json` on one machine, or in one row of the shared database when several nodes
 * share it (GATEWAY_SETTINGS_STORE), so an admin's change holds on every node: the changing node announces it
 * through the message broker (Redis pub/sub) and every node also compares the row's version each second.
 */
@Injectable()
export class GatewaySettingsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Gateway');
  private current: GatewayOptions | null = null;
  private admin: AdminKey | null = null;
  /** The file's admin key (file store only): written back with every change of the file. */
  private fileAdminKey = '';
  /** The admin key this start created, which `tb gateway` prints once; null when it existed before. */
  createdAdminKey: string | null = null;
  private ollama: OllamaClient | null = null;
  private loadedMtimeMs = 0;
  private loadedVersion = 0;
  private reloadTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  readonly catalog: ModelCatalog;
  readonly path: string;
  readonly store: 'file' | 'database';

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly gateway: GatewayConfig,
    @Inject(INFRASTRUCTURE_CONFIG) infrastructure: InfrastructureConfig,
    @InjectRepository(GatewaySettingsEntity) private readonly rows: Repository<GatewaySettingsEntity>,
    @Optional() @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker = new LocalMessageBroker(),
  ) {
    this.path = join(infrastructure.dataDir, 'gateway', 'config.json');
    this.store = gateway.settingsStore;
    this.catalog = new ModelCatalog(
      () => this.client,
      () => this.settings.model_types,
      gateway.modelCacheSeconds,
    );
  }

  /** Whether this start created the settings (and so a new admin key, which `tb gateway` prints once). */
  get createdOnStart(): boolean {
    return this.createdAdminKey !== null;
  }

  /** Where the settings live, as `tb gateway` names it. */
  get location(): string {
    return this.store === 'file' ? this.path : 'the database (table gateway_settings)';
  }

  async onModuleInit(): Promise<void> {
    if (this.store === 'file') await this.openFile();
    else await this.openRow();
    // The key itself is printed once by `tb gateway` on its own output, never into the logs.
    if (this.createdAdminKey) this.logger.log(`created the gateway settings in ${this.location} with a new admin key`);
    this.reloadTimer = setInterval(() => void this.reloadIfChanged(), RELOAD_INTERVAL_MS);
    this.reloadTimer.unref();
    if (this.store === 'database')
      this.unsubscribe = await this.broker.subscribe(SETTINGS_TOPIC, () => void this.reloadIfChanged());
  }

  async onModuleDestroy(): Promise<void> {
    if (this.reloadTimer) clearInterval(this.reloadTimer);
    await this.unsubscribe?.();
  }

  /** Picks up a change written by another gateway process; a broken file or row is reported and ignored. */
  async reloadIfChanged(): Promise<void> {
    try {
      if (this.store === 'file') {
        const { mtimeMs } = await stat(this.path);
        if (mtimeMs === this.loadedMtimeMs) return;
        this.useFile(validateSettings(JSON.parse(await readFile(this.path, 'utf8'))));
        this.loadedMtimeMs = mtimeMs;
      } else {
        const row = await this.rows.findOne({ where: { id: ROW_ID }, select: { id: true, version: true } });
        if (!row || row.version === this.loadedVersion) return;
        this.useRow(await this.rows.findOneByOrFail({ id: ROW_ID }));
      }
      this.catalog.invalidate();
    } catch (error) {
      this.logger.warn(`kept the previous settings: ${this.location} could not be used (${(error as Error).message})`);
    }
  }

  /** Whether `key` is the admin key (constant time: both sides are SHA-256 digests). */
  isAdminKey(keyDigest: Buffer): boolean {
    if (!this.admin) throw new Error('GatewaySettingsService used before the module initialised');
    return timingSafeEqual(keyDigest, this.admin.digest);
  }

  /** The settings as an admin sees them: secrets masked. In the database store they are read again first. */
  async masked(): Promise<Record<string, unknown>> {
    if (this.store === 'database') await this.reloadIfChanged();
    return this.maskedNow();
  }

  /**
   * Applies an admin's change: `replace` takes the whole object (PUT), otherwise top-level keys are merged
   * (PATCH; object values such as `rate_limits` merge one level deep). The admin key is not changed here
   * (`POST /admin/api/admin-key` replaces it), a masked secret sent back unchanged keeps its value. Validated
   * whole, then written at once: the file atomically, the row only if no other node changed it meanwhile
   * (else the change is applied again on top of theirs).
   */
  async update(change: unknown, replace: boolean): Promise<Record<string, unknown>> {
    if (typeof change !== 'object' || change === null || Array.isArray(change)) {
      throw new PlatformError('BAD_REQUEST', 'The configuration must be a JSON object');
    }
    for (let attempt = 0; ; attempt += 1) {
      if (this.store === 'database') await this.reloadIfChanged();
      const next = this.merged(change as Record<string, unknown>, replace);
      if (this.store === 'file') {
        const settings = validateSettings({ ...next, admin_key: this.fileAdminKey });
        await writeFileAtomically(this.path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
        this.useFile(settings);
        this.loadedMtimeMs = (await stat(this.path)).mtimeMs;
        break;
      }
      const settings = validateOptions(next);
      if (await this.writeRow({ settings: JSON.stringify(settings) })) break;
      if (attempt >= 4) throw new PlatformError('CONFLICT', 'The configuration kept changing meanwhile; try again');
    }
    this.catalog.invalidate();
    return this.maskedNow();
  }

  /** A new admin key (shown once to the caller); the old one stops working on every node. */
  async rotateAdminKey(): Promise<string> {
    const key = generateGatewayKey();
    if (this.store === 'file') {
      const settings = validateSettings({ ...this.settings, admin_key: key });
      await writeFileAtomically(this.path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
      this.useFile(settings);
      this.loadedMtimeMs = (await stat(this.path)).mtimeMs;
      return key;
    }
    while (!(await this.writeRow({ adminKeyHash: digest(key).toString('hex'), adminKeyHint: key.slice(-4) })))
      await this.reloadIfChanged();
    return key;
  }

  get settings(): GatewayOptions {
    if (!this.current) throw new Error('GatewaySettingsService used before the module initialised');
    return this.current;
  }

  /** OLLAMA_URL, when set, wins over the settings' `ollama_url`. */
  get ollamaUrl(): string {
    return this.gateway.ollamaUrl ?? this.settings.ollama_url;
  }

  get client(): OllamaClient {
    if (!this.ollama || this.ollama.baseUrl !== this.ollamaUrl) this.ollama = new OllamaClient(this.ollamaUrl);
    return this.ollama;
  }

  private maskedNow(): Record<string, unknown> {
    const settings = this.settings;
    return { ...settings, admin_key: `${MASK}${this.admin!.hint}`, hf_token: maskSecret(settings.hf_token) };
  }

  private merged(input: Record<string, unknown>, replace: boolean): Record<string, unknown> {
    const change = { ...input };
    const current = this.settings;
    const unknown = Object.keys(change).filter((key) => !(key in current) && key !== 'admin_key');
    if (unknown.length > 0) {
      throw new PlatformError('BAD_REQUEST', `Unknown configuration key(s): ${unknown.join(', ')}`, [
        { field: unknown[0], message: 'unknown key' },
      ]);
    }
    if (
      change.admin_key !== undefined &&
      change.admin_key !== `${MASK}${this.admin!.hint}` &&
      !(typeof change.admin_key === 'string' && this.isAdminKey(digest(change.admin_key)))
    ) {
      throw new PlatformError(
        'BAD_REQUEST',
        'admin_key cannot be changed through the configuration; POST /admin/api/admin-key issues a new one',
        [{ field: 'admin_key', message: 'read-only' }],
      );
    }
    delete change.admin_key;
    if (typeof change.hf_token === 'string' && change.hf_token.startsWith(MASK)) delete change.hf_token;
    if (replace) return { ...change, ...(change.hf_token === undefined ? { hf_token: current.hf_token } : {}) };
    const next: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(change)) {
      const existing = (current as unknown as Record<string, unknown>)[key];
      next[key] =
        isPlainObject(value) &&
        isPlainObject(existing) &&
        !['model_types', 'model_prices', 'loaded_models'].includes(key)
          ? { ...existing, ...value }
          : value;
    }
    return next;
  }

  private async openFile(): Promise<void> {
    const initial = this.gateway.ollamaUrl ? { ollama_url: this.gateway.ollamaUrl } : {};
    const { settings, created } = await loadOrCreateSettings(this.path, initial);
    this.useFile(settings);
    if (created) this.createdAdminKey = settings.admin_key;
    this.loadedMtimeMs = (await stat(this.path)).mtimeMs;
  }

  private useFile(settings: ReturnType<typeof validateSettings>): void {
    const { admin_key: adminKey, ...options } = settings;
    this.current = options;
    this.fileAdminKey = adminKey;
    this.admin = { digest: digest(adminKey), hint: adminKey.slice(-4) };
  }

  /**
   * Reads the shared row, creating it on the first start of the first node: from this node's settings file when
   * it has one (a single machine growing into a cluster keeps its settings and admin key), else from the defaults
   * with a new admin key. Nodes starting together agree on one row (the insert of the second fails on the key).
   */
  private async openRow(): Promise<void> {
    let row = await this.rows.findOneBy({ id: ROW_ID });
    if (!row) {
      const existing = await readFile(this.path, 'utf8').then(
        (text) => validateSettings(JSON.parse(text)),
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return null;
          throw new Error(`${this.path} could not be imported into the database: ${error.message}`);
        },
      );
      const adminKey = existing?.admin_key ?? generateGatewayKey();
      const { admin_key: _adminKey, ...options } = existing ?? {
        ...defaultSettings(),
        ...(this.gateway.ollamaUrl ? { ollama_url: this.gateway.ollamaUrl } : {}),
      };
      const created = this.rows.create({
        id: ROW_ID,
        settings: JSON.stringify(validateOptions(options)),
        adminKeyHash: digest(adminKey).toString('hex'),
        adminKeyHint: adminKey.slice(-4),
        version: 1,
        updatedAt: new Date(),
      });
      try {
        await this.rows.insert(created);
        row = created;
        if (!existing) this.createdAdminKey = adminKey;
        else this.logger.log(`imported ${this.path} into the database; the file is no longer read`);
      } catch (error) {
        row = await this.rows.findOneBy({ id: ROW_ID });
        if (!row) throw error;
      }
    }
    this.useRow(row);
  }

  private useRow(row: GatewaySettingsEntity): void {
    this.current = validateOptions(JSON.parse(row.settings));
    this.admin = { digest: Buffer.from(row.adminKeyHash, 'hex'), hint: row.adminKeyHint };
    this.loadedVersion = row.version;
  }

  /** Writes the row if nobody changed it since this node read it, then tells every node; false when somebody did. */
  private async writeRow(
    change: Partial<Pick<GatewaySettingsEntity, 'settings' | 'adminKeyHash' | 'adminKeyHint'>>,
  ): Promise<boolean> {
    const version = this.loadedVersion;
    const result = await this.rows.update(
      { id: ROW_ID, version },
      { ...change, version: version + 1, updatedAt: new Date() },
    );
    if (!result.affected) return false;
    this.useRow(await this.rows.findOneByOrFail({ id: ROW_ID }));
    await this.broker.publish(SETTINGS_TOPIC, { version: this.loadedVersion }).catch((error: unknown) => {
      // The row is written; the other nodes read it within their next poll.
      this.logger.warn(`could not announce a settings change to the other nodes: ${String(error)}`);
    });
    return true;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
