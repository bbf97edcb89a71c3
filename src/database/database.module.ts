import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PLATFORM_CONFIG } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { createDataSourceOptions } from './data-source-options.js';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [PLATFORM_CONFIG],
          useFactory: (config: PlatformConfig) => ({
            ...createDataSourceOptions(config.database, { logging: config.debug }),
            migrationsRun: config.runMigrations,
          }),
        }),
      ],
      exports: [TypeOrmModule],
    };
  }
}
