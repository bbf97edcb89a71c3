import { TopicHandlers, type BrokerHandler, type MessageBroker } from './message-broker.js';

/** One process alone: what a single worker without Redis or a manager uses. */
export class LocalMessageBroker implements MessageBroker {
  readonly driver = 'local' as const;
  private readonly handlers = new TopicHandlers();

  async publish(topic: string, payload: unknown): Promise<void> {
    // A JSON round trip, so a subscriber sees what it would see across processes (no shared objects).
    const copy = JSON.parse(JSON.stringify(payload ?? null)) as unknown;
    this.handlers.deliver(topic, copy);
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => Promise<void>> {
    const { remove } = this.handlers.add(topic, handler);
    return async () => void remove();
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
