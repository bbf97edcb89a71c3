import type { ModuleRef } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS_CLIENT } from '../counters/counters.module.js';
import { JOB_QUEUE, type JobQueue } from '../queue/job-queue.js';
import { StorageService } from '../storage/storage.service.js';

/**
 * One dependency readiness asks about. `check` resolves when the dependency answers and throws when
 * not; it returns `'skip'` when the service has no such dependency configured (Redis without REDIS_URL).
 * Dependencies are looked up when asked, so a service lists only the checks whose modules it imports.
 */
export interface ReadinessCheck {
  name: string;
  /** Providers the check needs; start-up fails when the service does not provide them. */
  requires?: unknown[];
  check(modules: ModuleRef): Promise<void | 'skip'>;
}

const resolve = <T>(modules: ModuleRef, token: unknown): T => modules.get(token as never, { strict: false }) as T;

export const BUILT_IN_CHECKS = {
  database: {
    name: 'database',
    requires: [DataSource],
    async check(modules) {
      await resolve<DataSource>(modules, DataSource).query('SELECT 1');
    },
  },
  storage: {
    name: 'storage',
    requires: [StorageService],
    async check(modules) {
      await resolve<StorageService>(modules, StorageService).primary.health();
    },
  },
  queue: {
    name: 'queue',
    requires: [JOB_QUEUE],
    async check(modules) {
      await resolve<JobQueue>(modules, JOB_QUEUE).health();
    },
  },
  redis: {
    name: 'redis',
    requires: [REDIS_CLIENT],
    async check(modules) {
      const redis = resolve<Redis | null>(modules, REDIS_CLIENT);
      if (!redis) return 'skip';
      await redis.ping();
    },
  },
} satisfies Record<string, ReadinessCheck>;

export type BuiltInCheckName = keyof typeof BUILT_IN_CHECKS;
