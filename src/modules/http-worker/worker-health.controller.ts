import { Controller, Get, Head, Header, HttpCode, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../auth/access.decorators.js';
import { WorkerHealthDto, WorkerMetricsDto } from './http-worker.responses.js';
import { WorkerLifecycle } from './worker-lifecycle.js';
import { WorkerMetrics, prometheusText, type WorkerMetricsSnapshot } from './worker-metrics.js';

/**
 * The worker's liveness (what the manager and the reverse proxy poll) and its counters. `/health` answers close
 * their connection: the manager sends its warm-up requests through nginx to this route (docs/workers.md), and a
 * keep-alive connection they left in nginx's upstream pool would keep an idle worker's drain waiting until nginx
 * drops it (`DRAIN_IDLE_CONNECTION_MS`). A monitor pays one connect per probe.
 */
@ApiTags('worker')
@Public()
@Controller()
export class WorkerHealthController {
  constructor(
    private readonly lifecycle: WorkerLifecycle,
    private readonly metrics: WorkerMetrics,
  ) {}

  @Get('health')
  @ApiOkResponse({ description: 'The worker takes requests', type: WorkerHealthDto })
  @ApiServiceUnavailableResponse({
    description: 'The worker drains (SIGTERM): send no new work',
    type: WorkerHealthDto,
  })
  health(@Res({ passthrough: true }) response: Response): WorkerHealthDto {
    response.setHeader('Connection', 'close');
    if (this.lifecycle.draining) response.status(503);
    return {
      status: this.lifecycle.draining ? 'draining' : 'healthy',
      worker_id: this.lifecycle.workerId,
      pid: process.pid,
      timestamp: new Date().toISOString(),
    };
  }

  @Head('health')
  @HttpCode(200)
  @ApiOkResponse({ description: 'The worker takes requests (503 while draining), without a body' })
  healthHead(@Res({ passthrough: true }) response: Response): void {
    response.setHeader('Connection', 'close');
    if (this.lifecycle.draining) response.status(503);
  }

  @Get('metrics')
  @ApiOkResponse({ description: 'Request counters of this worker process', type: WorkerMetricsDto })
  metricsJson(): WorkerMetricsSnapshot {
    return this.snapshot();
  }

  @Get('metrics/prometheus')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'The same counters in the Prometheus text format', schema: { type: 'string' } })
  metricsPrometheus(): string {
    return prometheusText(this.snapshot());
  }

  private snapshot(): WorkerMetricsSnapshot {
    return this.metrics.snapshot({
      workerId: this.lifecycle.workerId,
      inFlight: this.lifecycle.inFlight,
      draining: this.lifecycle.draining,
    });
  }
}
