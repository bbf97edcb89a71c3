import type { CounterHit, CounterStore } from '../counters/counter-store.js';

/** How long a worker gathers hits before telling the primary; bounds both IPC traffic and drift. */
const FLUSH_INTERVAL_MS = 5;
const PEEK_TIMEOUT_MS = 5_000;

interface CounterFlush {
  tb: 'counter-flush';
  id: number;
  hits: Array<{ key: string; hits: number; windowMs: number; reset?: boolean }>;
  /** Keys whose shared count the worker asks for (`peek`), answered after the hits are applied. */
  peeks?: string[];
}

interface CounterState {
  tb: 'counter-state';
  id: number;
  counts: Array<{ key: string; count: number; resetInMs: number }>;
  peeked?: Array<{ key: string; count: number }>;
}

interface Known {
  count: number;
  resetAt: number;
}

/**
 * The workers of a clustered service without Redis share one set of counters kept by the primary
 * process, so a limit means the same with one worker or several. To keep the hot path free of a
 * round trip per request, a worker answers from the last count the primary reported plus its own
 * hits since, and sends its hits in batches every few milliseconds. Each reply brings the shared
 * total, so a worker learns of the others' hits with its next flush: the limit can be exceeded by
 * roughly what the workers admit within one flush interval (milliseconds), which a per-hour limit
 * can afford.
 */
export class ClusterCounterStore implements CounterStore {
  readonly driver = 'memory' as const;
  private readonly known = new Map<string, Known>();
  private readonly pending = new Map<string, { hits: number; windowMs: number; reset?: boolean }>();
  private readonly inFlight = new Map<number, Map<string, number>>();
  private readonly pendingPeeks = new Map<string, Array<(count: number) => void>>();
  private readonly peeksInFlight = new Map<number, Map<string, Array<(count: number) => void>>>();
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;

  constructor(
    private readonly send: (message: CounterFlush) => void = (message) => process.send!(message),
    listen: (receive: (message: unknown) => void) => void = (receive) => process.on('message', receive),
  ) {
    listen((message) => this.receive(message));
  }

  async increment(key: string, windowMs: number, now = Date.now()): Promise<CounterHit> {
    let known = this.known.get(key);
    if (!known || known.resetAt <= now) {
      known = { count: 0, resetAt: now + windowMs };
      this.known.set(key, known);
    }
    const entry = this.pending.get(key) ?? { hits: 0, windowMs };
    entry.hits += 1;
    this.pending.set(key, entry);
    this.schedule();
    return { count: known.count + this.unconfirmed(key), resetInMs: known.resetAt - now };
  }

  /**
   * A read that must see every worker's hits (a logout on another worker), so it goes to the primary:
   * one round trip, sent with the next flush (within a few milliseconds).
   */
  peek(key: string): Promise<number> {
    return new Promise((resolve, reject) => {
      // A primary that does not answer must fail the request, not hang it.
      const timer = setTimeout(
        () => reject(new Error(`the cluster primary did not answer a counter read within ${PEEK_TIMEOUT_MS} ms`)),
        PEEK_TIMEOUT_MS,
      );
      timer.unref();
      const answer = (count: number) => {
        clearTimeout(timer);
        resolve(count);
      };
      this.pendingPeeks.set(key, [...(this.pendingPeeks.get(key) ?? []), answer]);
      this.schedule();
    });
  }

  async reset(key: string): Promise<void> {
    this.known.delete(key);
    this.pending.set(key, { hits: 0, windowMs: 0, reset: true });
    this.schedule();
  }

  /** Hits of this worker the primary has not counted yet (queued or on their way). */
  private unconfirmed(key: string): number {
    let hits = this.pending.get(key)?.hits ?? 0;
    for (const batch of this.inFlight.values()) hits += batch.get(key) ?? 0;
    return hits;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = null;
    if (this.pending.size === 0 && this.pendingPeeks.size === 0) return;
    const id = this.nextId++;
    const hits = [...this.pending.entries()].map(([key, entry]) => ({ key, ...entry }));
    this.inFlight.set(id, new Map(hits.map((hit) => [hit.key, hit.hits])));
    this.pending.clear();
    const peeks = [...this.pendingPeeks.keys()];
    if (peeks.length > 0) this.peeksInFlight.set(id, new Map(this.pendingPeeks));
    this.pendingPeeks.clear();
    this.send({ tb: 'counter-flush', id, hits, ...(peeks.length > 0 ? { peeks } : {}) });
  }

  private receive(message: unknown): void {
    const state = message as CounterState;
    if (state?.tb !== 'counter-state') return;
    this.inFlight.delete(state.id);
    const now = Date.now();
    for (const { key, count, resetInMs } of state.counts) {
      // The primary's count includes the batch just confirmed; hits still unconfirmed are added on read.
      this.known.set(key, { count, resetAt: now + resetInMs });
    }
    const waiting = this.peeksInFlight.get(state.id);
    if (!waiting) return;
    this.peeksInFlight.delete(state.id);
    for (const { key, count } of state.peeked ?? []) for (const resolve of waiting.get(key) ?? []) resolve(count);
  }
}

/** The primary's side: applies a worker's batch to the shared counters and answers with the totals. */
export async function applyCounterFlush(message: unknown, counters: CounterStore): Promise<CounterState | null> {
  const flush = message as CounterFlush;
  if (flush?.tb !== 'counter-flush') return null;
  const counts: CounterState['counts'] = [];
  for (const hit of flush.hits) {
    if (hit.reset) {
      await counters.reset(hit.key);
      continue;
    }
    let last: CounterHit = { count: 0, resetInMs: hit.windowMs };
    for (let index = 0; index < hit.hits; index += 1) last = await counters.increment(hit.key, hit.windowMs);
    counts.push({ key: hit.key, count: last.count, resetInMs: last.resetInMs });
  }
  if (!flush.peeks) return { tb: 'counter-state', id: flush.id, counts };
  const peeked = await Promise.all(flush.peeks.map(async (key) => ({ key, count: await counters.peek(key) })));
  return { tb: 'counter-state', id: flush.id, counts, peeked };
}
