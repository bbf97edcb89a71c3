import type { HttpWorkerConfig } from '../../config/config.js';

/** What the HTTP worker module needs from the platform configuration (its `httpWorker` section). */
export type HttpWorkerOptions = Pick<
  HttpWorkerConfig,
  'openModules' | 'uploadMaxBytes' | 'uploadDir' | 'bodyLimitBytes' | 'clientLogMaxBytes' | 'drainTimeoutSeconds'
> & {
  /** This process's name in /health, /metrics and logs. */
  workerId: string;
};

export const HTTP_WORKER_OPTIONS = Symbol('HTTP_WORKER_OPTIONS');
