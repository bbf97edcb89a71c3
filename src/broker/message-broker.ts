/** Injection token of the process's MessageBroker (BrokerModule). */
export const MESSAGE_BROKER = Symbol('MESSAGE_BROKER');

export type BrokerDriver = 'local' | 'redis' | 'ipc';

export type BrokerHandler = (payload: unknown) => void;

/**
 * Publish/subscribe between the worker processes of one platform (the platform's message
 * broker). A published payload reaches every subscriber of its topic in every connected process, this
 * one included, in publication order per publisher. Payloads are JSON values.
 */
export interface MessageBroker {
  readonly driver: BrokerDriver;
  publish(topic: string, payload: unknown): Promise<void>;
  /** Resolves once the subscription is active (a publish after it is seen); returns the unsubscribe. */
  subscribe(topic: string, handler: BrokerHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Topic subscribers of one process, shared by the drivers. */
export class TopicHandlers {
  private readonly byTopic = new Map<string, Set<BrokerHandler>>();

  add(topic: string, handler: BrokerHandler): { first: boolean; remove: () => boolean } {
    let set = this.byTopic.get(topic);
    const first = !set;
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(handler);
    return {
      first,
      remove: () => {
        set.delete(handler);
        if (set.size > 0) return false;
        this.byTopic.delete(topic);
        return true;
      },
    };
  }

  /** Calls every handler of `topic`; a throwing handler does not stop the others. */
  deliver(topic: string, payload: unknown, onError: (error: unknown) => void = () => undefined): void {
    const set = this.byTopic.get(topic);
    if (!set) return;
    for (const handler of [...set]) {
      try {
        handler(payload);
      } catch (error) {
        onError(error);
      }
    }
  }

  clear(): void {
    this.byTopic.clear();
  }
}
