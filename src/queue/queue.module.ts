import { Global, Inject, Module, type BeforeApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { BullJobQueue } from './bull-job-queue.js';
import { InProcessJobQueue } from './in-process-job-queue.js';
import { JOB_QUEUE, type JobQueue } from './job-queue.js';

@Global()
@Module({
  providers: [
    {
      provide: JOB_QUEUE,
      inject: [INFRASTRUCTURE_CONFIG, DataSource],
      useFactory: (config: InfrastructureConfig, dataSource: DataSource): JobQueue =>
        config.redisUrl ? new BullJobQueue(config.redisUrl, config.redisPrefix) : new InProcessJobQueue(dataSource),
    },
  ],
  exports: [JOB_QUEUE],
})
export class QueueModule implements BeforeApplicationShutdown {
  constructor(@Inject(JOB_QUEUE) private readonly queue: JobQueue) {}

  /** Before the database closes (TypeORM closes it on application shutdown), so running jobs can record their outcome. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
