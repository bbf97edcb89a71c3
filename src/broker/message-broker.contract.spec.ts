import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { IpcMessageBroker, relayBrokerMessages, type IpcPort } from './ipc-message-broker.js';
import { LocalMessageBroker } from './local-message-broker.js';
import type { MessageBroker } from './message-broker.js';
import { RedisMessageBroker } from './redis-message-broker.js';

/**
 * One contract for every driver: `open()` gives two brokers standing for two worker processes (the same
 * broker twice for the local driver, which has no peers). The IPC pair talks through a parent that relays
 * with relayBrokerMessages, as the worker manager does; Redis runs when TEST_REDIS_URL is set.
 */
interface BrokerBackend {
  open(): Promise<[MessageBroker, MessageBroker]>;
  crossProcess: boolean;
}

/** A child's end of an IPC channel: `send` goes to the parent, the parent's `send` arrives as 'message'. */
class FakeChildPort extends EventEmitter implements IpcPort {
  constructor(private readonly toParent: (message: unknown, sender: FakeChildPort) => void) {
    super();
  }
  send(message: unknown): boolean {
    // Structured clone and a later tick, as a real IPC channel would.
    const copy = structuredClone(message);
    setImmediate(() => this.toParent(copy, this));
    return true;
  }
  /** What the parent calls to send to this child. */
  deliver(message: unknown): void {
    const copy = structuredClone(message);
    setImmediate(() => this.emit('message', copy));
  }
}

const backends: Array<[string, () => BrokerBackend]> = [
  [
    'LocalMessageBroker',
    () => ({
      crossProcess: false,
      open: async () => {
        const broker = new LocalMessageBroker();
        return [broker, broker];
      },
    }),
  ],
  [
    'IpcMessageBroker',
    () => ({
      crossProcess: true,
      open: async () => {
        // relayBrokerMessages compares the sender with each child: hand it the same wrapper objects.
        const wrappers = new Map<FakeChildPort, { send(message: unknown): void }>();
        const relay = (message: unknown, sender: FakeChildPort) =>
          relayBrokerMessages(message, wrappers.get(sender)!, () => wrappers.values());
        const a = new FakeChildPort(relay);
        const b = new FakeChildPort(relay);
        for (const child of [a, b]) {
          wrappers.set(child, { send: (message: unknown) => child.deliver(message) });
        }
        return [new IpcMessageBroker(a), new IpcMessageBroker(b)];
      },
    }),
  ],
];
const testRedisUrl = process.env.TEST_REDIS_URL;
if (testRedisUrl) {
  backends.push([
    'RedisMessageBroker',
    () => ({
      crossProcess: true,
      open: async () => {
        // A configured Redis that cannot be reached fails the suite, never skips it.
        const probe = new Redis(testRedisUrl, {
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
        } catch (error) {
          throw new Error(`TEST_REDIS_URL is set but ${testRedisUrl} cannot be reached: ${(error as Error).message}`);
        } finally {
          probe.disconnect();
        }
        const prefix = `tbtest-broker-${randomBytes(6).toString('hex')}`;
        return [new RedisMessageBroker(testRedisUrl, prefix), new RedisMessageBroker(testRedisUrl, prefix)];
      },
    }),
  ]);
}

function collector(): { seen: unknown[]; handler: (payload: unknown) => void; waitFor(count: number): Promise<void> } {
  const seen: unknown[] = [];
  const waiters: Array<() => void> = [];
  return {
    seen,
    handler: (payload) => {
      seen.push(payload);
      waiters.splice(0).forEach((wake) => wake());
    },
    async waitFor(count) {
      const deadline = Date.now() + 3000;
      while (seen.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} messages, got ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe.each(backends)('MessageBroker contract: %s', (_driver, createBackend) => {
  const backend = createBackend();
  let first: MessageBroker;
  let second: MessageBroker;

  beforeEach(async () => {
    [first, second] = await backend.open();
  });

  afterEach(async () => {
    await first.close();
    if (second !== first) await second.close();
  });

  it('delivers a payload to a subscriber in the publishing process', async () => {
    const inbox = collector();
    await first.subscribe('ws', inbox.handler);
    await first.publish('ws', { op: 'send', conn_id: 'c1', data: 'hi' });
    await inbox.waitFor(1);
    expect(inbox.seen).toEqual([{ op: 'send', conn_id: 'c1', data: 'hi' }]);
  });

  it('delivers to the other process, in publication order, once each', async () => {
    const inbox = collector();
    await second.subscribe('ws', inbox.handler);
    for (let index = 0; index < 20; index += 1) await first.publish('ws', { index });
    await inbox.waitFor(20);
    await settle();
    expect(inbox.seen).toEqual(Array.from({ length: 20 }, (_, index) => ({ index })));
  });

  it('keeps topics apart', async () => {
    const ws = collector();
    const other = collector();
    await second.subscribe('ws', ws.handler);
    await second.subscribe('other', other.handler);
    await first.publish('other', 'for other');
    await other.waitFor(1);
    await settle();
    expect([ws.seen, other.seen]).toEqual([[], ['for other']]);
  });

  it('stops delivering after unsubscribe', async () => {
    const kept = collector();
    const dropped = collector();
    await second.subscribe('ws', kept.handler);
    const unsubscribe = await second.subscribe('ws', dropped.handler);
    await unsubscribe();
    await first.publish('ws', 1);
    await kept.waitFor(1);
    await settle();
    expect([kept.seen, dropped.seen]).toEqual([[1], []]);
  });

  it('hands subscribers a copy, never the publisher object', async () => {
    const inbox = collector();
    await first.subscribe('ws', inbox.handler);
    const payload = { nested: { value: 1 } };
    await first.publish('ws', payload);
    await inbox.waitFor(1);
    expect(inbox.seen[0]).toEqual(payload);
    expect(inbox.seen[0]).not.toBe(payload);
  });

  it('a throwing subscriber does not stop the others', async () => {
    const inbox = collector();
    await second.subscribe('ws', () => {
      throw new Error('handler bug');
    });
    await second.subscribe('ws', inbox.handler);
    await first.publish('ws', 'still delivered');
    await inbox.waitFor(1);
    expect(inbox.seen).toEqual(['still delivered']);
  });

  if (backend.crossProcess) {
    it('a process without subscribers does not receive its own topic twice', async () => {
      const own = collector();
      const peer = collector();
      await first.subscribe('ws', own.handler);
      await second.subscribe('ws', peer.handler);
      await first.publish('ws', 'once');
      await Promise.all([own.waitFor(1), peer.waitFor(1)]);
      await settle();
      expect([own.seen, peer.seen]).toEqual([['once'], ['once']]);
    });
  }
});

describe('IpcMessageBroker', () => {
  it('refuses to start without an IPC channel to the parent', () => {
    const port = new EventEmitter() as unknown as IpcPort;
    expect(() => new IpcMessageBroker(port)).toThrow(/needs an IPC channel/);
  });

  it('relayBrokerMessages forwards to every child but the sender and ignores other messages', () => {
    const received: Array<[string, unknown]> = [];
    const children = ['a', 'b', 'c'].map((name) => ({
      name,
      send: (message: unknown) => received.push([name, message]),
    }));
    const message = { tb: 'bus', channel: 'ws', payload: { op: 'broadcast_all', data: 1 } };
    expect(relayBrokerMessages(message, children[1], () => children)).toBe(true);
    expect(relayBrokerMessages({ tb: 'listening', url: 'x' }, children[0], () => children)).toBe(false);
    expect(received).toEqual([
      ['a', message],
      ['c', message],
    ]);
  });
});
