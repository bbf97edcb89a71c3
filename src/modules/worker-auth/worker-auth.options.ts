import type { WorkerAuthConfig } from '../../config/config.js';

export const WORKER_AUTH_CONFIG = Symbol('WORKER_AUTH_CONFIG');
export type { WorkerAuthConfig };
