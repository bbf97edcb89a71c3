import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
import { WorkerMetrics } from './worker-metrics.js';

/**
 * The worker's life: requests in flight, open connections, and the drain that SIGTERM starts (`/health` answers
 * 503, every answer carries `Connection: close`, the listener takes no new connections, in-flight requests finish,
 * idle connections are left to nginx to close).
 */
@Injectable()
export class WorkerLifecycle {
  readonly workerId: string;
  private drainingSince: number | null = null;
  private inFlightCount = 0;
  /** Whether `watch` follows every response's `close` (then `track` adds no listener of its own). */
  private watching = false;
  private idleWaiters: Array<() => void> = [];
  /**
   * Each response `track` counts and when it started (performance.now()), until its `close`. Kept here rather than
   * as a property of the response: a property added to Node's response object grows its property store (a copy of
   * every property) on every request.
   */
  private readonly tracked = new Map<ServerResponse, number>();
  /** Each open connection: the answer it is busy with, or since when it has been idle (accepted or answered). */
  private readonly connections = new Map<Socket, ServerResponse | number>();

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
  readonly track = (request: Request, response: Response, next: NextFunction): void => {
    this.inFlightCount += 1;
    if (request.headers['x-forwarded-for'] !== undefined) this.metrics.recordProxied();
    this.tracked.set(response, performance.now());
    // `close` follows every response, finished or cut off. On a watched server the one `close` listener `watch`
    // adds to every response ends the count too (one listener and no closure per request on the hot path).
    if (!this.watching) response.once('close', () => this.untrack(response));
    next();
  };

  /**
   * Watches the worker's HTTP server (before it listens): its open connections and, once draining,
   * `Connection: close` on every answer — also those given before the Express middleware (a CORS preflight, a
   * 414) — so each connection nginx uses during a drain closes after its answer.
   */
  watch(server: Server): void {
    this.watching = true;
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, Date.now());
      socket.once('close', () => this.connections.delete(socket));
    });
    const connections = this.connections;
    const untrack = (response: ServerResponse) => this.untrack(response);
    // One listener function for every response (no closure, no `once` wrapper per request): `close` comes once.
    function onResponseClose(this: ServerResponse): void {
      const socket = this.req.socket;
      if (connections.get(socket) === this) connections.set(socket, Date.now());
      untrack(this);
    }
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      connections.set(request.socket, response);
      if (this.draining) response.setHeader('Connection', 'close');
      response.on('close', onResponseClose);
    });
  }

  /** Ends the count of a response `track` counted (once; nothing for one it never saw, such as a preflight). */
  private untrack(response: ServerResponse): void {
    const since = this.tracked.get(response);
    if (since === undefined) return;
    this.tracked.delete(response);
    this.metrics.record(response.writableFinished ? response.statusCode : 499, performance.now() - since);
    this.inFlightCount -= 1;
    if (this.inFlightCount === 0) this.notifyIdle();
  }

  startDraining(): void {
    this.drainingSince ??= Date.now();
    // Answers in progress whose headers are not out yet close their connection too.
    for (const state of this.connections.values())
      if (typeof state !== 'number' && !state.headersSent) state.setHeader('Connection', 'close');
  }

  /**
   * Resolves true once every open connection has been idle for `idleMs` (nginx has closed it by then, or it is
   * not nginx's), false when `timeoutMs` passes first. Closing a connection nginx may still send on would cost a
   * POST: nginx does not resend one whose request went out (upstream-keep-alive.ts).
   */
  async whenConnectionsQuiet(idleMs: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = Date.now();
      const quiet = [...this.connections.values()].every((state) => typeof state === 'number' && now - state >= idleMs);
      if (quiet) return true;
      if (now >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, deadline - now)));
    }
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
