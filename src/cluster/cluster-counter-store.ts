import type { CounterHit, CounterStore } from '../counters/counter-store.js';

const ANSWER_TIMEOUT_MS = 5_000;

/** One counter operation a worker asks the primary for, answered in the same order. */
type CounterOperation =
  { op: 'increment'; key: string; windowMs: number } | { op: 'peek'; key: string } | { op: 'reset'; key: string };

interface CounterFlush {
  tb: 'counter-flush';
  id: number;
  operations: CounterOperation[];
}

type CounterResult = CounterHit | { count: number } | null;

interface CounterState {
  tb: 'counter-state';
  id: number;
  results: CounterResult[];
}

interface Waiting {
  operations: CounterOperation[];
  answers: Array<{ resolve(result: CounterResult): void; reject(error: Error): void }>;
}

/**
 * The workers of a clustered service without Redis share one set of counters kept by the primary
 * process, so a limit means the same with one worker or several. The primary is the one place that
 * counts: every hit is answered with the count the primary reached by applying it, so with a limit of
 * 20 exactly 20 requests pass however the requests are spread over the workers. A worker asks once per
 * event-loop turn for all the hits of that turn (one IPC message each way), which keeps the cost of a
 * busy worker at one round trip per batch rather than per request.
 */
export class ClusterCounterStore implements CounterStore {
  readonly driver = 'memory' as const;
  private queued: Waiting = { operations: [], answers: [] };
  private readonly inFlight = new Map<number, Waiting & { timer: NodeJS.Timeout }>();
  private scheduled = false;
  private nextId = 1;

  constructor(
    private readonly send: (message: CounterFlush) => void = (message) => process.send!(message),
    listen: (receive: (message: unknown) => void) => void = (receive) => process.on('message', receive),
  ) {
    listen((message) => this.receive(message));
  }

  increment(key: string, windowMs: number): Promise<CounterHit> {
    return this.ask({ op: 'increment', key, windowMs }) as Promise<CounterHit>;
  }

  /** A read that must see every worker's hits (a logout on another worker): answered by the primary too. */
  async peek(key: string): Promise<number> {
    return ((await this.ask({ op: 'peek', key })) as { count: number }).count;
  }

  async reset(key: string): Promise<void> {
    await this.ask({ op: 'reset', key });
  }

  private ask(operation: CounterOperation): Promise<CounterResult> {
    return new Promise((resolve, reject) => {
      this.queued.operations.push(operation);
      this.queued.answers.push({ resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // Every hit of this turn of the event loop travels in one message.
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queued;
    this.queued = { operations: [], answers: [] };
    const id = this.nextId++;
    // A primary that does not answer must fail the requests, not hang them.
    const timer = setTimeout(() => {
      this.inFlight.delete(id);
      const error = new Error(`the cluster primary did not answer a counter request within ${ANSWER_TIMEOUT_MS} ms`);
      for (const answer of batch.answers) answer.reject(error);
    }, ANSWER_TIMEOUT_MS);
    timer.unref();
    this.inFlight.set(id, { ...batch, timer });
    this.send({ tb: 'counter-flush', id, operations: batch.operations });
  }

  private receive(message: unknown): void {
    const state = message as CounterState;
    if (state?.tb !== 'counter-state') return;
    const batch = this.inFlight.get(state.id);
    if (!batch) return;
    this.inFlight.delete(state.id);
    clearTimeout(batch.timer);
    batch.answers.forEach((answer, index) => answer.resolve(state.results[index] ?? null));
  }
}

/**
 * The primary's side: applies a worker's operations to the shared counters, in order, and answers each
 * one. The store is in the primary's memory and each increment is applied whole, so two workers' hits on
 * one key are counted one after the other, never both against the same count.
 */
export async function applyCounterFlush(message: unknown, counters: CounterStore): Promise<CounterState | null> {
  const flush = message as CounterFlush;
  if (flush?.tb !== 'counter-flush' || !Array.isArray(flush.operations)) return null;
  const results: CounterResult[] = [];
  for (const operation of flush.operations) {
    if (operation.op === 'increment') results.push(await counters.increment(operation.key, operation.windowMs));
    else if (operation.op === 'peek') results.push({ count: await counters.peek(operation.key) });
    else {
      await counters.reset(operation.key);
      results.push(null);
    }
  }
  return { tb: 'counter-state', id: flush.id, results };
}
