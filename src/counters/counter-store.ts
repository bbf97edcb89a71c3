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
  /**
   * `increment` answered at once, by a store that counts in this process (memory): a caller on a hot path (the
   * rate-limit guard on every request) then needs no promise. Absent from stores that count elsewhere.
   */
  incrementNow?(key: string, windowMs: number): CounterHit;
  /** The count in the key's current window without adding a hit; 0 when no window runs (session denylist). */
  peek(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  readonly driver = 'memory' as const;
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = Date.now();

  async increment(key: string, windowMs: number): Promise<CounterHit> {
    return this.incrementNow(key, windowMs);
  }

  incrementNow(key: string, windowMs: number): CounterHit {
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

  async peek(key: string): Promise<number> {
    const window = this.windows.get(key);
    return window && window.resetAt > Date.now() ? window.count : 0;
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
    // Redis takes whole milliseconds above zero.
    const windowPx = Math.max(1, Math.ceil(windowMs));
    // One round trip: SET NX PX starts a window only when none is running, so the window stays fixed
    // (PEXPIRE … NX would do the same but needs Redis 7; on Redis 6 it fails and the count would never expire).
    const results = await this.redis.multi().set(fullKey, 0, 'PX', windowPx, 'NX').incr(fullKey).pttl(fullKey).exec();
    if (!results) throw new Error('Redis transaction aborted');
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
    const count = Number(results[1][1]);
    const ttl = Number(results[2][1]);
    // A key left without expiry (written by an older version) would count forever: give it a window.
    if (ttl === -1) await this.redis.pexpire(fullKey, windowPx);
    return { count, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async peek(key: string): Promise<number> {
    return Number((await this.redis.get(`${this.prefix}:counter:${key}`)) ?? 0);
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}:counter:${key}`);
  }
}
