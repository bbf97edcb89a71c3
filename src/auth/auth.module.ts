import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { ThrottlerModule } from '@nestjs/throttler';
import { PLATFORM_CONFIG } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { AuthGuard } from './auth.guard.js';
import type { AuthenticatedRequest } from './principal.js';
import { CounterThrottlerStorage, RATE_LIMIT_WINDOW_MS, RateLimitGuard, rateLimitTracker, skipRateLimit } from './rate-limit.guard.js';
import { TokenVerifier } from './token-verifier.js';
import { COUNTER_STORE, type CounterStore } from '../counters/counter-store.js';

/**
 * Token verification, the global guards (authentication first, then rate limits, which depend on who
 * the caller is) and the per-caller limits of seed 01 "Limits".
 */
@Global()
@Module({
  imports: [
    JwtModule.register({}),
    ThrottlerModule.forRootAsync({
      inject: [PLATFORM_CONFIG, COUNTER_STORE],
      useFactory: (config: PlatformConfig, counters: CounterStore) => ({
        storage: new CounterThrottlerStorage(counters),
        throttlers: [
          {
            name: 'default',
            ttl: RATE_LIMIT_WINDOW_MS,
            limit: (context) => {
              const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
              return request.principal ? config.rateLimit.authPerHour : config.rateLimit.anonPerHour;
            },
          },
        ],
        skipIf: skipRateLimit,
        getTracker: (request) => rateLimitTracker(request as AuthenticatedRequest),
      }),
    }),
  ],
  providers: [
    TokenVerifier,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [TokenVerifier],
})
export class AuthModule {}
