import { TopicHandlers, type BrokerHandler, type MessageBroker } from './message-broker.js';

/**
 * The IPC message between a worker and its parent process (the worker manager), the same shape the
 * clustered registry's bus uses (src/cluster/cluster-bus.ts). A worker sends it to its parent; the parent
 * forwards it unchanged to every other child (`Supervisor.broadcast(message, sender)`), never back to the
 * sender, which has already delivered it to its own subscribers.
 */
export interface BrokerIpcMessage {
  tb: 'bus';
  /** The broker topic (`ws` for WebSocket commands, see ws-commands.ts). */
  channel: string;
  payload: unknown;
}

export function isBrokerIpcMessage(message: unknown): message is BrokerIpcMessage {
  const candidate = message as Partial<BrokerIpcMessage> | null;
  return candidate?.tb === 'bus' && typeof candidate.channel === 'string';
}

/** The two ends of a process's IPC channel the broker uses (`process` in a forked child). */
export interface IpcPort {
  send?(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/** Workers started by the worker manager without Redis: the manager relays between its children. */
export class IpcMessageBroker implements MessageBroker {
  readonly driver = 'ipc' as const;
  private readonly handlers = new TopicHandlers();
  private readonly listener = (message: unknown) => {
    if (isBrokerIpcMessage(message)) this.handlers.deliver(message.channel, message.payload, this.onError);
  };

  constructor(
    private readonly port: IpcPort = process as IpcPort,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    if (typeof port.send !== 'function')
      throw new Error('MESSAGE_BROKER=ipc needs an IPC channel to the parent process (start the worker with fork)');
    port.on('message', this.listener);
  }

  async publish(topic: string, payload: unknown): Promise<void> {
    const message: BrokerIpcMessage = {
      tb: 'bus',
      channel: topic,
      payload: JSON.parse(JSON.stringify(payload ?? null)),
    };
    this.handlers.deliver(topic, message.payload, this.onError);
    this.port.send!(message);
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => Promise<void>> {
    const { remove } = this.handlers.add(topic, handler);
    return async () => void remove();
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.port.off('message', this.listener);
  }
}

/**
 * The parent's half, for the worker manager and tests: forwards every broker message a child sends to
 * every other child. `children()` is read on each message, so children may come and go.
 */
export function relayBrokerMessages<Child extends { send?(message: unknown): unknown }>(
  message: unknown,
  sender: Child,
  children: () => Iterable<Child>,
): boolean {
  if (!isBrokerIpcMessage(message)) return false;
  for (const child of children()) if (child !== sender) child.send?.(message);
  return true;
}
