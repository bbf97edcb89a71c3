import type { ServiceName } from './sections/services.js';

/** What the command line adds to (or puts before) the environment when a process loads its configuration. */
export interface LoadConfigOptions {
  /**
   * The services this process runs: their required settings (the platform secret …) must be present.
   * Commands that verify and sign no token (`tb mods`, `tb functions`, `tb docs`, `tb db`) pass none.
   */
  services?: readonly ServiceName[];
  /** The registry's port (`--port`). */
  port?: number;
  dataDir?: string;
  /** The registry's process count (`--workers`). */
  workers?: number;
  /** The HTTP worker's port and id (`tb worker http --port N --worker-id ID`). */
  httpWorkerPort?: number;
  httpWorkerId?: string;
  /** The model gateway's port (`tb gateway --port`). */
  gatewayPort?: number;
  /** Lets `tb up` and `tb token` supply the secret persisted in the data directory without writing it into the environment. */
  jwtSecret?: string;
}
