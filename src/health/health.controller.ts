import { Controller, Get, Head, HttpCode, Inject, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthIndicatorService } from '@nestjs/terminus';
import { SkipRateLimit } from '../auth/rate-limit.guard.js';
import { HealthDto, ReadinessDto, ReadinessFailureDto } from './health.responses.js';
import type { Response } from 'express';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../auth/access.decorators.js';
import { PLATFORM_CONFIG } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { REDIS_CLIENT } from '../counters/counters.module.js';
import { JOB_QUEUE, type JobQueue } from '../queue/job-queue.js';
import { StorageService } from '../storage/storage.service.js';

const startedAt = Date.now();
const CHECK_TIMEOUT_MS = 3000;

@ApiTags('health')
@Public()
@SkipRateLimit()
@Controller()
export class HealthController {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly dataSource: DataSource,
    private readonly storage: StorageService,
    private readonly indicators: HealthIndicatorService,
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Optional() @Inject(REDIS_CLIENT) private readonly redis: Redis | null,
  ) {}

  @Get(['health', 'api/v1/health'])
  @ApiOkResponse({ description: 'Liveness', type: HealthDto })
  health() {
    return { status: 'ok', version: this.config.version, uptime_seconds: Math.floor((Date.now() - startedAt) / 1000) };
  }

  @Head(['health', 'api/v1/health'])
  @HttpCode(200)
  @ApiOkResponse({ description: 'Liveness, without a body' })
  healthHead(): void {}

  /** Readiness: the database, the primary object store, the job queue and Redis (when configured) answer. */
  @Get(['ready', 'api/v1/ready'])
  @ApiOkResponse({ description: 'Every dependency answers', type: ReadinessDto })
  @ApiServiceUnavailableResponse({ description: 'Names each dependency that failed', type: ReadinessFailureDto })
  async ready(@Res({ passthrough: true }) response: Response) {
    const checks = [
      this.indicators.check('database').attempt(() => this.dataSource.query('SELECT 1')).withTimeout(CHECK_TIMEOUT_MS),
      this.indicators.check('storage').attempt(() => this.storage.primary.health()).withTimeout(CHECK_TIMEOUT_MS),
      this.indicators.check('queue').attempt(() => this.queue.health()).withTimeout(CHECK_TIMEOUT_MS),
      ...(this.redis ? [this.indicators.check('redis').attempt(async () => { await this.redis!.ping(); }).withTimeout(CHECK_TIMEOUT_MS)] : []),
    ];
    const results = await Promise.all(checks);
    const details: Record<string, { status: string; message?: string }> = {};
    for (const result of results) Object.assign(details, result);
    const failed = Object.entries(details).filter(([, value]) => value.status !== 'up').map(([name]) => name);
    if (failed.length > 0) {
      response.status(503);
      return { status: 'unavailable', failed, message: `Not ready: ${failed.join(', ')} did not answer`, checks: details };
    }
    return { status: 'ready', checks: details };
  }
}
