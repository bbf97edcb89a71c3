import type { Redis } from 'ioredis';

/**
 * Shared counters with a fixed window (rate limits, later token denylists and balances): in memory
 * for one process, in Redis when REDIS_URL is set so every process sees the same count.
 */
export const COUNTER_STORE = Symbol('COUNTER_STORE');

export interface CounterHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

export interface CounterStore {
  readonly driver: 'memory' | 'redis';
  increment(key: string, windowMs: number): Promise<CounterHit>;
  reset(key: string): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  readonly driver = 'memory' as const;
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = Date.now();

  async increment(key: string, windowMs: number): Promise<CounterHit> {
    const now = Date.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  /** Drops expired windows now and then so idle keys do not accumulate. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

export class RedisCounterStore implements CounterStore {
  readonly driver = 'redis' as const;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async increment(key: string, windowMs: number): Promise<CounterHit> {
    const fullKey = `${this.prefix}:counter:${key}`;
    // INCR and a first-time PEXPIRE in one round trip; NX keeps the window fixed.
    const results = await this.redis.multi().incr(fullKey).pexpire(fullKey, windowMs, 'NX').pttl(fullKey).exec();
    if (!results) throw new Error('Redis transaction aborted');
    const count = Number(results[0][1]);
    const ttl = Number(results[2][1]);
    return { count, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}:counter:${key}`);
  }
}
