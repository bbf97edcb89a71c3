import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { PlatformError } from '../common/errors.js';
import { RouteMetadata } from '../common/route-metadata.js';
import { isAdmin } from '../auth/auth.guard.js';
import type { AuthenticatedRequest } from '../auth/principal.js';
import { COUNTER_STORE, type CounterStore } from '../counters/counter-store.js';
import { RATE_LIMIT_OPTIONS, type RateLimitOptions } from './rate-limit.options.js';

export const RATE_LIMIT_WINDOW_MS = 3_600_000;
const SKIP_RATE_LIMIT = 'platform:skipRateLimit';

/** Health and readiness probes are not counted against anyone. */
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);

/** Per caller, not per route: anonymous callers by IP, authenticated ones by user. */
export function rateLimitTracker(request: AuthenticatedRequest): string {
  if (request.user) return `user:${request.user.id}`;
  if (request.principal) return `principal:${request.principal.platformUserId}`;
  return `ip:${request.ip ?? 'unknown'}`;
}

/**
 * The registry's defaults: anonymous 100 requests/hour per client IP, authenticated 1000/hour per user,
 * admins unlimited, in fixed hourly windows kept in the CounterStore (Redis when configured, so every
 * process shares them). Every counted response carries X-RateLimit-Limit/-Remaining/-Reset (seconds);
 * past the limit the answer is 429 RATE_LIMITED with Retry-After in whole seconds.
 *
 * Runs after AuthGuard (registration order: a service imports RateLimitModule after AuthModule), so it
 * knows who the caller is.
 * (@nestjs/throttler 6 is CommonJS requiring the ESM-only @nestjs/common 12; that loads under Node's
 * require(esm) but not inside Jest's ESM VM on Node 20, so the limits are enforced here directly.)
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly skipped: RouteMetadata<boolean>;

  constructor(
    reflector: Reflector,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(RATE_LIMIT_OPTIONS) private readonly options: RateLimitOptions,
  ) {
    this.skipped = new RouteMetadata<boolean>(reflector, SKIP_RATE_LIMIT);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (this.skipped.of(context)) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (isAdmin(request)) return true;
    const limit = request.principal ? this.options.authPerHour : this.options.anonPerHour;
    const hit = await this.counters.increment(`rate:${rateLimitTracker(request)}`, RATE_LIMIT_WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil(hit.resetInMs / 1000));
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader('X-RateLimit-Limit', String(limit));
    response.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - hit.count)));
    response.setHeader('X-RateLimit-Reset', String(resetSeconds));
    if (hit.count > limit) {
      response.setHeader('Retry-After', String(resetSeconds));
      throw new PlatformError(
        'RATE_LIMITED',
        `Rate limit of ${limit} requests per hour exceeded; retry in ${resetSeconds} s`,
      );
    }
    return true;
  }
}
