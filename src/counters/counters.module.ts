import { Global, Inject, Module, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { ClusterCounterStore } from '../cluster/cluster-counter-store.js';
import { inClusterWorker } from '../cluster/cluster-bus.js';
import { COUNTER_STORE, MemoryCounterStore, RedisCounterStore, type CounterStore } from './counter-store.js';

export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      inject: [INFRASTRUCTURE_CONFIG],
      useFactory: (config: InfrastructureConfig) =>
        config.redisUrl
          ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false })
          : null,
    },
    {
      provide: COUNTER_STORE,
      inject: [INFRASTRUCTURE_CONFIG, REDIS_CLIENT],
      useFactory: (config: InfrastructureConfig, redis: Redis | null): CounterStore => {
        if (redis) return new RedisCounterStore(redis, config.redisPrefix);
        // Workers of a clustered service share the primary's counters.
        return inClusterWorker() ? new ClusterCounterStore() : new MemoryCounterStore();
      },
    },
  ],
  exports: [REDIS_CLIENT, COUNTER_STORE],
})
export class CountersModule implements OnApplicationShutdown {
  constructor(@Optional() @Inject(REDIS_CLIENT) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }
}
