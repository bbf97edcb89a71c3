import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ConfigModule } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { HealthModule } from '../health/health.module.js';
import { RegistryModule } from '../modules/registry/registry.module.js';
import { QueueModule } from '../queue/queue.module.js';
import { FilesModule } from '../storage/files.module.js';
import { StorageModule } from '../storage/storage.module.js';

/** The package and artifact registry (seed 01): `tb registry`, port 4025, API under /api/v1. */
@Module({})
export class RegistryServiceModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    return {
      module: RegistryServiceModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        QueueModule,
        StorageModule,
        FilesModule,
        AuthModule,
        HealthModule,
        RegistryModule,
      ],
    };
  }
}
