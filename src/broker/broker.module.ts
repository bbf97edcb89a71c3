import { Global, Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { inClusterWorker } from '../cluster/cluster-bus.js';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { IpcMessageBroker } from './ipc-message-broker.js';
import { LocalMessageBroker } from './local-message-broker.js';
import { MESSAGE_BROKER, type MessageBroker } from './message-broker.js';
import { RedisMessageBroker } from './redis-message-broker.js';

/**
 * The broker MESSAGE_BROKER asks for: `auto` is Redis when REDIS_URL is set, else the primary's relay in a
 * worker of a clustered service (`tb registry --workers N`), else this process alone.
 */
export function createMessageBroker(config: InfrastructureConfig, logger = new Logger('MessageBroker')): MessageBroker {
  const onError = (error: unknown) => logger.error(`message broker: ${(error as Error)?.message ?? String(error)}`);
  const choice =
    config.messageBroker === 'auto'
      ? config.redisUrl
        ? 'redis'
        : inClusterWorker()
          ? 'ipc'
          : 'local'
      : config.messageBroker;
  if (choice === 'redis') return new RedisMessageBroker(config.redisUrl!, config.redisPrefix, onError);
  if (choice === 'ipc') return new IpcMessageBroker(process, onError);
  return new LocalMessageBroker();
}

/** The process's MessageBroker (MESSAGE_BROKER), for the workers and the app core's WsChannels. */
@Global()
@Module({
  providers: [
    {
      provide: MESSAGE_BROKER,
      inject: [INFRASTRUCTURE_CONFIG],
      useFactory: (config: InfrastructureConfig) => createMessageBroker(config),
    },
  ],
  exports: [MESSAGE_BROKER],
})
export class BrokerModule implements OnApplicationShutdown {
  constructor(@Inject(MESSAGE_BROKER) private readonly broker: MessageBroker) {}

  async onApplicationShutdown(): Promise<void> {
    await this.broker.close();
  }
}
