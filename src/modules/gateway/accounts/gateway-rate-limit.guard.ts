import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { PlatformError } from '../../../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../../../counters/counter-store.js';
import type { AuthenticatedRequest } from '../../../auth/principal.js';
import { gatewayCallerOf, type GatewayCaller } from '../gateway-caller.js';
import { GatewaySettingsService } from '../gateway-settings.service.js';

const BILLABLE = 'gateway:billable';

/** Marks a route that costs the caller (counted by the per-minute limit and metered). */
export const Billable = () => SetMetadata(BILLABLE, true);

const WINDOW_MS = 60_000;

/** OpenAI's reset format: `1s`, `6m0s`, `20ms`. */
export function resetDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/**
 * Requests per user per minute by tier (`rate_limits.payg`, `rate_limits.sub` of the gateway config;
 * admins unlimited) on billable routes, counted in the platform's CounterStore (Redis when configured,
 * so every process shares the count). Sends OpenAI's `x-ratelimit-*-requests` headers; over the limit a
 * 429 with `retry-after`.
 */
@Injectable()
export class GatewayRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly gateway: GatewaySettingsService,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (!this.reflector.getAllAndOverride<boolean>(BILLABLE, [context.getHandler(), context.getClass()])) return true;
    const caller = gatewayCallerOf(context.switchToHttp().getRequest<AuthenticatedRequest>().principal);
    if (!caller?.userId || caller.tier === 'admin') return true;
    const limit = this.limitFor(caller.tier);
    const hit = await this.counters.increment(`gateway:rpm:${caller.userId}`, WINDOW_MS);
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader('x-ratelimit-limit-requests', String(limit));
    response.setHeader('x-ratelimit-remaining-requests', String(Math.max(0, limit - hit.count)));
    response.setHeader('x-ratelimit-reset-requests', resetDuration(hit.resetInMs));
    if (hit.count > limit) {
      response.setHeader('retry-after', String(Math.max(1, Math.ceil(hit.resetInMs / 1000))));
      throw new PlatformError(
        'RATE_LIMITED',
        `Rate limit reached for requests: ${limit} per minute on the ${caller.tier} tier. Try again in ${resetDuration(hit.resetInMs)}.`,
      );
    }
    return true;
  }

  /** Counts one request outside HTTP (a live-voice turn); throws the 429 error when over the limit. */
  async consume(caller: GatewayCaller): Promise<void> {
    if (!caller.userId || caller.tier === 'admin') return;
    const limit = this.limitFor(caller.tier);
    const hit = await this.counters.increment(`gateway:rpm:${caller.userId}`, WINDOW_MS);
    if (hit.count > limit) {
      throw new PlatformError(
        'RATE_LIMITED',
        `Rate limit reached for requests: ${limit} per minute. Try again in ${resetDuration(hit.resetInMs)}.`,
      );
    }
  }

  limitFor(tier: 'payg' | 'sub' | 'admin'): number {
    return tier === 'sub' ? this.gateway.settings.rate_limits.sub : this.gateway.settings.rate_limits.payg;
  }

  /** The caller's current window without counting a request (for /user/api/ratelimit). */
  async status(userId: string, tier: 'payg' | 'sub' | 'admin') {
    if (tier === 'admin') return { limit: null, remaining: null, used: 0 };
    const limit = this.limitFor(tier);
    const used = await this.counters.peek(`gateway:rpm:${userId}`);
    return { limit, remaining: Math.max(0, limit - used), used };
  }
}
