import { Redis } from 'ioredis';
import { TopicHandlers, type BrokerHandler, type MessageBroker } from './message-broker.js';

/**
 * Redis pub/sub: every process connected to the same Redis and key prefix. A subscribed connection can
 * only subscribe, so the broker keeps two: one to publish, one to listen.
 */
export class RedisMessageBroker implements MessageBroker {
  readonly driver = 'redis' as const;
  private readonly handlers = new TopicHandlers();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  /** Both connections ready: a SUBSCRIBE sent before the subscriber's ready check (INFO) would make it fail. */
  private readonly ready: Promise<unknown>;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    const options = { maxRetriesPerRequest: 2, lazyConnect: true };
    this.publisher = new Redis(redisUrl, options);
    this.subscriber = new Redis(redisUrl, options);
    this.publisher.on('error', onError);
    this.subscriber.on('error', onError);
    this.ready = Promise.all([this.publisher.connect(), this.subscriber.connect()]);
    // Reported by the first publish or subscribe; never an unhandled rejection.
    this.ready.catch(() => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      const topic = channel.slice(this.channelPrefix.length);
      let payload: unknown;
      try {
        payload = JSON.parse(message);
      } catch (error) {
        this.onError(error);
        return;
      }
      this.handlers.deliver(topic, payload, this.onError);
    });
  }

  private get channelPrefix(): string {
    return `${this.prefix}:broker:`;
  }

  async publish(topic: string, payload: unknown): Promise<void> {
    await this.ready;
    await this.publisher.publish(this.channelPrefix + topic, JSON.stringify(payload ?? null));
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => Promise<void>> {
    await this.ready;
    const { first, remove } = this.handlers.add(topic, handler);
    if (first) await this.subscriber.subscribe(this.channelPrefix + topic);
    return async () => {
      if (remove()) await this.subscriber.unsubscribe(this.channelPrefix + topic);
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await this.ready.catch(() => undefined);
    await Promise.all([
      this.subscriber.quit().catch(() => this.subscriber.disconnect()),
      this.publisher.quit().catch(() => this.publisher.disconnect()),
    ]);
  }
}
