import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Socket } from 'node:net';
import type { Request, Response } from 'express';
import { PlatformError } from '../common/errors.js';
import { RouteMetadata } from '../common/route-metadata.js';
import { isAdmin } from '../auth/auth.guard.js';
import type { AuthenticatedRequest } from '../auth/principal.js';
import { COUNTER_STORE, type CounterHit, type CounterStore } from '../counters/counter-store.js';
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
  /** The limits as header values, written once instead of on every request. */
  private readonly anonLimit: string;
  private readonly authLimit: string;
  /**
   * An anonymous caller's counter key per connection, while the app trusts no proxy: the address is then the
   * socket's (what `request.ip` answers after parsing X-Forwarded-For and discarding it), the same for every
   * request of a keep-alive connection.
   */
  private readonly anonKeys = new WeakMap<Socket, string>();

  constructor(
    reflector: Reflector,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(RATE_LIMIT_OPTIONS) private readonly options: RateLimitOptions,
  ) {
    this.skipped = new RouteMetadata<boolean>(reflector, SKIP_RATE_LIMIT);
    this.anonLimit = String(options.anonPerHour);
    this.authLimit = String(options.authPerHour);
  }

  /** Synchronous with a store counting in this process (no promise on every request), else a Promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (this.skipped.of(context)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest & Request>();
    if (isAdmin(request)) return true;
    const key = this.keyOf(request);
    const response = http.getResponse<Response>();
    if (this.counters.incrementNow)
      return this.answer(request, response, this.counters.incrementNow(key, RATE_LIMIT_WINDOW_MS));
    return this.counters.increment(key, RATE_LIMIT_WINDOW_MS).then((hit) => this.answer(request, response, hit));
  }

  /** `rate:` + rateLimitTracker(request). */
  private keyOf(request: AuthenticatedRequest & Request): string {
    if (request.user || request.principal || request.app.get('trust proxy') !== false)
      return `rate:${rateLimitTracker(request)}`;
    const socket = request.socket;
    let key = this.anonKeys.get(socket);
    if (key === undefined) {
      key = `rate:ip:${socket.remoteAddress ?? 'unknown'}`;
      this.anonKeys.set(socket, key);
    }
    return key;
  }

  private answer(request: AuthenticatedRequest, response: Response, hit: CounterHit): boolean {
    const authenticated = Boolean(request.principal);
    const limit = authenticated ? this.options.authPerHour : this.options.anonPerHour;
    const resetSeconds = Math.max(1, Math.ceil(hit.resetInMs / 1000));
    response.setHeader('X-RateLimit-Limit', authenticated ? this.authLimit : this.anonLimit);
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
