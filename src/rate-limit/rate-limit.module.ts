import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RATE_LIMIT_OPTIONS, type RateLimitOptions } from './rate-limit.options.js';

/**
 * Hourly per-caller limits as a global guard, for the services that want them (the registry). Import it
 * after AuthModule: the guard reads the caller AuthGuard has set. Needs a COUNTER_STORE (CountersModule).
 */
@Module({})
export class RateLimitModule {
  static forRoot(options: RateLimitOptions): DynamicModule {
    return {
      module: RateLimitModule,
      providers: [
        { provide: RATE_LIMIT_OPTIONS, useValue: options },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
    };
  }
}
