import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { PlatformConfig } from './config.js';

export const PLATFORM_CONFIG = Symbol('PLATFORM_CONFIG');

/** Makes the validated configuration injectable everywhere (`@Inject(PLATFORM_CONFIG)`). */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: PLATFORM_CONFIG, useValue: config }],
      exports: [PLATFORM_CONFIG],
    };
  }
}
