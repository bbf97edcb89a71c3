import { Controller, Get, Head, HttpCode, Inject, Res, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthIndicatorService } from '@nestjs/terminus';
import { HealthDto, ReadinessDto, ReadinessFailureDto } from './health.responses.js';
import type { Response } from 'express';
import { Public } from '../auth/access.decorators.js';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { SkipRateLimit } from '../rate-limit/rate-limit.guard.js';
import type { ReadinessCheck } from './readiness-checks.js';

export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');
export const LIVENESS_DETAILS = Symbol('LIVENESS_DETAILS');

/** What a service adds to `/health`: read from memory, so the answer stays a liveness answer. */
export interface LivenessDetails {
  /** Providers the details read (checked at start-up, as a readiness check's). */
  requires?: unknown[];
  details(modules: ModuleRef): Record<string, unknown>;
}
const startedAt = Date.now();
const CHECK_TIMEOUT_MS = 3000;

/**
 * `/ready` alone: for a service that answers `/health` itself (the HTTP worker reports its drain state
 * there), `HealthModule.forRoot({ liveness: false })`.
 */
@ApiTags('health')
@Public()
@SkipRateLimit()
@Controller()
export class ReadinessController implements OnModuleInit {
  constructor(
    @Inject(INFRASTRUCTURE_CONFIG) protected readonly config: InfrastructureConfig,
    @Inject(HEALTH_CHECKS) private readonly checks: ReadinessCheck[],
    @Inject(LIVENESS_DETAILS) private readonly livenessDetails: LivenessDetails | null,
    protected readonly modules: ModuleRef,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /** A listed check whose dependency the service does not provide is a wiring mistake: fail at start-up, not at /ready. */
  onModuleInit(): void {
    const liveness = this.livenessDetails
      ? [{ name: 'liveness details', requires: this.livenessDetails.requires }]
      : [];
    for (const { name, requires = [] } of [...this.checks, ...liveness]) {
      for (const token of requires) {
        try {
          this.modules.get(token as never, { strict: false });
        } catch {
          throw new Error(
            `HealthModule: the "${name}" readiness check needs ${String((token as { name?: string }).name ?? token)}, which this service does not provide`,
          );
        }
      }
    }
  }

  protected livenessExtras(): Record<string, unknown> {
    return this.livenessDetails?.details(this.modules) ?? {};
  }

  /** Readiness: every dependency the service listed (HealthModule.forRoot) answers; an unconfigured one is left out. */
  @Get(['ready', 'api/v1/ready'])
  @ApiOkResponse({ description: 'Every dependency answers', type: ReadinessDto })
  @ApiServiceUnavailableResponse({ description: 'Names each dependency that failed', type: ReadinessFailureDto })
  async ready(@Res({ passthrough: true }) response: Response) {
    const checks = this.checks.map(async ({ name, check }) => {
      let skipped = false;
      const result = await this.indicators
        .check(name)
        .attempt(async () => {
          skipped = (await check(this.modules)) === 'skip';
        })
        .withTimeout(CHECK_TIMEOUT_MS);
      return skipped ? {} : result;
    });
    const results = await Promise.all(checks);
    const details: Record<string, { status: string; message?: string }> = {};
    for (const result of results) Object.assign(details, result);
    const failed = Object.entries(details)
      .filter(([, value]) => value.status !== 'up')
      .map(([name]) => name);
    if (failed.length > 0) {
      response.status(503);
      return {
        status: 'unavailable',
        failed,
        message: `Not ready: ${failed.join(', ')} did not answer`,
        checks: details,
      };
    }
    return { status: 'ready', checks: details };
  }
}

/** `/health` (liveness) and `/ready` (readiness), with their `/api/v1/…` aliases. */
@ApiTags('health')
@Public()
@SkipRateLimit()
@Controller()
export class HealthController extends ReadinessController {
  @Get(['health', 'api/v1/health'])
  @ApiOkResponse({ description: 'Liveness', type: HealthDto })
  health() {
    return {
      status: 'ok',
      version: this.config.version,
      uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
      ...this.livenessExtras(),
    };
  }

  @Head(['health', 'api/v1/health'])
  @HttpCode(200)
  @ApiOkResponse({ description: 'Liveness, without a body' })
  healthHead(): void {}
}
