import { Inject, Injectable, type ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerStorage } from '@nestjs/throttler';
import type { Response } from 'express';
import { PlatformError } from '../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../counters/counter-store.js';
import { isAdmin } from './auth.guard.js';
import type { AuthenticatedRequest } from './principal.js';

export const RATE_LIMIT_WINDOW_MS = 3_600_000;

/** Throttler storage over our CounterStore: fixed hourly windows, shared through Redis when configured. */
@Injectable()
export class CounterThrottlerStorage implements ThrottlerStorage {
  constructor(@Inject(COUNTER_STORE) private readonly counters: CounterStore) {}

  async increment(key: string, ttl: number, limit: number): Promise<{ totalHits: number; timeToExpire: number; isBlocked: boolean; timeToBlockExpire: number }> {
    const hit = await this.counters.increment(`rate:${key}`, ttl);
    const seconds = Math.max(1, Math.ceil(hit.resetInMs / 1000));
    return { totalHits: hit.count, timeToExpire: seconds, isBlocked: hit.count > limit, timeToBlockExpire: seconds };
  }
}

/** Per caller, not per route: anonymous callers by IP, authenticated ones by user; admins unlimited. */
export function rateLimitTracker(request: AuthenticatedRequest): string {
  return request.user ? `user:${request.user.id}` : request.principal ? `principal:${request.principal.platformUserId}` : `ip:${request.ip ?? 'unknown'}`;
}

export function skipRateLimit(context: ExecutionContext): boolean {
  return isAdmin(context.switchToHttp().getRequest<AuthenticatedRequest>());
}

@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return tracker;
  }

  /** The 429 carries the same X-RateLimit headers as every other response, and Retry-After in seconds. */
  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader('X-RateLimit-Limit', detail.limit);
    response.setHeader('X-RateLimit-Remaining', 0);
    response.setHeader('X-RateLimit-Reset', detail.timeToExpire);
    response.setHeader('Retry-After', detail.timeToBlockExpire);
    throw new PlatformError('RATE_LIMITED', `Rate limit of ${detail.limit} requests per hour exceeded; retry in ${detail.timeToBlockExpire} s`);
  }
}
