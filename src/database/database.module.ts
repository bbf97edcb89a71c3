import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { createDataSourceOptions } from './data-source-options.js';
import { SqliteCheckpointService } from './sqlite-checkpoint.service.js';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [INFRASTRUCTURE_CONFIG],
          useFactory: (config: InfrastructureConfig) => ({
            ...createDataSourceOptions(config.database, { logging: config.debug }),
            migrationsRun: config.runMigrations,
          }),
        }),
      ],
      providers: [SqliteCheckpointService],
      exports: [TypeOrmModule],
    };
  }
}
