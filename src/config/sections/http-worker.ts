import { join, resolve } from 'node:path';
import type { LoadConfigOptions } from '../load-config-options.js';
import { MiB, type EnvironmentReader, type WorkerPoolConfig } from './environment-reader.js';

/** The HTTP workers: `tb worker http`, serving the application core at `/api/{module}/{function}`. */
export interface HttpWorkerConfig extends WorkerPoolConfig {
  /** WORKER_ID (or `--worker-id`): this process's name in /health and logs; `http_<8 hex>` when unset. */
  workerId: string | null;
  /** CORS_ORIGINS: origins answered with credentials besides Tauri and any-port localhost / 127.0.0.1. */
  corsOrigins: string[];
  /** DRAIN_TIMEOUT_SECONDS: how long SIGTERM waits for in-flight requests before exiting (default 15). */
  drainTimeoutSeconds: number;
  /** OPEN_MODULES: modules whose API functions need no session, whatever their `level`. */
  openModules: string[];
  /** HTTP_UPLOAD_MAX_BYTES: largest file one multipart field may carry (default 50 MiB). */
  uploadMaxBytes: number;
  /** HTTP_UPLOAD_DIR: where uploads are streamed before the function runs (default `<DATA_DIR>/uploads`). */
  uploadDir: string;
  /** HTTP_BODY_LIMIT_BYTES: largest JSON or form body (default 2 MiB). */
  bodyLimitBytes: number;
  /** CLIENT_LOG_MAX_BYTES: largest `POST /api/client-logs` body (default 64 KiB). */
  clientLogMaxBytes: number;
  /** `Secure` on the session cookie: on unless NODE_ENV=development. */
  secureCookies: boolean;
}

// Workers sit behind the reverse proxy: they listen on loopback unless told otherwise.
export function readHttpWorkerSection(
  read: EnvironmentReader,
  dataDir: string,
  options: LoadConfigOptions,
): HttpWorkerConfig {
  const pool = read.workerPool('HTTP_WORKER', 8000, 4);
  const corsOrigins = read.originList('CORS_ORIGINS');
  return {
    ...pool,
    basePort: options.httpWorkerPort ?? pool.basePort,
    workerId: options.httpWorkerId ?? read.string('WORKER_ID'),
    corsOrigins,
    drainTimeoutSeconds: read.number('DRAIN_TIMEOUT_SECONDS', 15, { min: 0 }),
    openModules: read.list('OPEN_MODULES'),
    uploadMaxBytes: read.integer('HTTP_UPLOAD_MAX_BYTES', 50 * MiB, { min: 1 }),
    uploadDir: resolve(read.string('HTTP_UPLOAD_DIR') ?? join(dataDir, 'uploads')),
    bodyLimitBytes: read.integer('HTTP_BODY_LIMIT_BYTES', 2 * MiB, { min: 1024 }),
    clientLogMaxBytes: read.integer('CLIENT_LOG_MAX_BYTES', 64 * 1024, { min: 256, max: 16 * MiB }),
    secureCookies: read.string('NODE_ENV') !== 'development',
  };
}
