import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG } from '../../config/config.module.js';
import type { PlatformConfig } from '../../config/config.js';
import { ModelCatalog } from './model-catalog.js';
import { OllamaClient } from './ollama/ollama-client.js';
import { loadOrCreateSettings, type GatewaySettings } from './gateway-settings.js';

/** The gateway's settings file and what hangs off it: the runtime client and the model catalog. */
@Injectable()
export class GatewaySettingsService implements OnModuleInit {
  private readonly logger = new Logger('Gateway');
  private current: GatewaySettings | null = null;
  private ollama: OllamaClient | null = null;
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
    // Printed once, when the file is made; afterwards it is read from the file (mode 0600).
    if (created) this.logger.log(`created ${this.path}; admin key: ${settings.admin_key}`);
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
