import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
import { WorkerMetrics } from './worker-metrics.js';

/**
 * The worker's life: requests in flight, and the drain that SIGTERM starts (`/health` answers 503, every
 * answer carries `Connection: close`, the listener takes no new connections, in-flight requests finish).
 */
@Injectable()
export class WorkerLifecycle {
  readonly workerId: string;
  private drainingSince: number | null = null;
  private inFlightCount = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    @Inject(HTTP_WORKER_OPTIONS) options: HttpWorkerOptions,
    private readonly metrics: WorkerMetrics,
  ) {
    this.workerId = options.workerId;
  }

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  /**
   * Express middleware: counts the request until its response is finished or its connection is gone, and
   * records it in the metrics (a connection lost before the answer counts as an error).
   */
  readonly track = (_request: Request, response: Response, next: NextFunction): void => {
    this.inFlightCount += 1;
    const started = performance.now();
    if (this.draining) response.setHeader('Connection', 'close');
    // `close` follows every response, finished or cut off (one listener keeps the hot path light).
    response.once('close', () => {
      this.metrics.record(response.writableFinished ? response.statusCode : 499, performance.now() - started);
      this.inFlightCount -= 1;
      if (this.inFlightCount === 0) this.notifyIdle();
    });
    next();
  };

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** Resolves true once no request is in flight, false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlightCount === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((waiter) => waiter !== onIdle);
        resolve(false);
      }, timeoutMs);
      const onIdle = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.push(onIdle);
    });
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
