import { randomUUID } from 'node:crypto';
import type { CounterHit, CounterStore } from '../counters/counter-store.js';

interface CounterRequest {
  tb: 'counter';
  id: string;
  op: 'increment' | 'reset';
  key: string;
  windowMs: number;
}

interface CounterReply {
  tb: 'counter-reply';
  id: string;
  hit?: CounterHit;
}

/**
 * The workers of a clustered service without Redis share one set of counters kept by the primary
 * process, so rate limits mean the same with one worker or several.
 */
export class ClusterCounterStore implements CounterStore {
  readonly driver = 'memory' as const;
  private readonly pending = new Map<string, (reply: CounterReply) => void>();

  constructor() {
    process.on('message', (message: unknown) => {
      const reply = message as CounterReply;
      if (reply?.tb !== 'counter-reply') return;
      this.pending.get(reply.id)?.(reply);
      this.pending.delete(reply.id);
    });
  }

  increment(key: string, windowMs: number): Promise<CounterHit> {
    return this.ask('increment', key, windowMs).then((reply) => reply.hit!);
  }

  async reset(key: string): Promise<void> {
    await this.ask('reset', key, 0);
  }

  private ask(op: CounterRequest['op'], key: string, windowMs: number): Promise<CounterReply> {
    const id = randomUUID();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      process.send!({ tb: 'counter', id, op, key, windowMs } satisfies CounterRequest);
    });
  }
}

export function isCounterRequest(message: unknown): message is CounterRequest {
  return (message as CounterRequest)?.tb === 'counter';
}
