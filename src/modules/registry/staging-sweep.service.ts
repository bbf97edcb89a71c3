import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { uploadTempRoot } from '../../common/multipart-reader.js';
import { sweepStagedUploads } from '../../common/staging-sweeper.js';
import { INFRASTRUCTURE_CONFIG, REGISTRY_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig, RegistryConfig } from '../../config/config.js';

/** Sweeps staged uploads (DATA_DIR/tmp) of processes that no longer run, at start and then periodically. */
@Injectable()
export class StagingSweepService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('UploadStaging');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
  ) {}

  get maxAgeMs(): number {
    return this.registry.uploadStagingMaxAgeSeconds * 1000;
  }

  async onModuleInit(): Promise<void> {
    await this.sweep();
    const every = Math.min(this.maxAgeMs, 5 * 60_000);
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async sweep(): Promise<string[]> {
    const removed = await sweepStagedUploads(uploadTempRoot(this.infrastructure), this.maxAgeMs);
    if (removed.length) this.logger.log(`Swept ${removed.length} leftover staged upload(s)`);
    return removed;
  }
}
