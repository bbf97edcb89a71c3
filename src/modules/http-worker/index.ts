/** Public API of the HTTP worker module (what the app module, the CLI and the tests import). */
export { corsOriginRule } from './cors-origins.js';
export { HttpWorkerModule } from './http-worker.module.js';
export { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
export { WorkerLifecycle } from './worker-lifecycle.js';
export { WorkerMetrics, prometheusText, type WorkerMetricsSnapshot } from './worker-metrics.js';
export {
  DRAIN_IDLE_CONNECTION_MS,
  PROXY_UPSTREAM_IDLE_SECONDS,
  WORKER_KEEP_ALIVE_TIMEOUT_MS,
} from './upstream-keep-alive.js';
