import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryCounterStore, RedisCounterStore, type CounterStore } from './counter-store.js';

/**
 * One contract for the in-memory store and, when TEST_REDIS_URL is set, the Redis store. A configured
 * Redis that cannot be reached fails the suite, never skips it.
 */
interface CounterBackend {
  open(): Promise<CounterStore>;
  /** Redis only: the raw client and the full key, to inspect what the store left behind. */
  raw?: { redis(): Redis; keyOf(key: string): string };
  dispose(): Promise<void>;
}

function memoryBackend(): CounterBackend {
  return { open: async () => new MemoryCounterStore(), dispose: async () => undefined };
}

function redisBackend(redisUrl: string): CounterBackend {
  const prefix = `tbtest-counters-${randomBytes(6).toString('hex')}`;
  let redis: Redis | null = null;
  return {
    async open() {
      // No retries: an unreachable Redis must fail the suite, not hang it.
      redis = new Redis(redisUrl, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: 2000,
      });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
      } catch (error) {
        redis = null;
        throw new Error(`TEST_REDIS_URL is set but ${redisUrl} cannot be reached: ${(error as Error).message}`);
      }
      return new RedisCounterStore(redis, prefix);
    },
    raw: {
      redis: () => {
        if (!redis) throw new Error('open() has not run');
        return redis;
      },
      keyOf: (key) => `${prefix}:counter:${key}`,
    },
    async dispose() {
      if (!redis) return;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}

const backends: Array<[string, () => CounterBackend]> = [['MemoryCounterStore', memoryBackend]];
const testRedisUrl = process.env.TEST_REDIS_URL;
if (testRedisUrl) backends.push(['RedisCounterStore', () => redisBackend(testRedisUrl)]);

const WINDOW_MS = 200;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let keyCounter = 0;
function uniqueKey(label: string): string {
  keyCounter += 1;
  return `rate:${label}:${keyCounter}`;
}

describe.each(backends)('CounterStore contract: %s', (_driver, createBackend) => {
  const backend = createBackend();
  let store: CounterStore;

  beforeAll(async () => {
    store = await backend.open();
  });

  afterAll(() => backend.dispose());

  it('counts hits on one key within a window', async () => {
    const key = uniqueKey('counts');

    const hits = [
      await store.increment(key, WINDOW_MS),
      await store.increment(key, WINDOW_MS),
      await store.increment(key, WINDOW_MS),
    ];

    expect(hits.map((hit) => hit.count)).toEqual([1, 2, 3]);
  });

  it('reports the time left in the window, never more than the window', async () => {
    const key = uniqueKey('time-left');

    const first = await store.increment(key, 60_000);
    await sleep(30);
    const later = await store.increment(key, 60_000);

    expect(first.resetInMs).toBeGreaterThan(59_000);
    expect(first.resetInMs).toBeLessThanOrEqual(60_000);
    expect(later.resetInMs).toBeLessThan(first.resetInMs);
  });

  it('starts again from one once the window has passed', async () => {
    const key = uniqueKey('expires');
    await store.increment(key, WINDOW_MS);
    await store.increment(key, WINDOW_MS);

    await sleep(WINDOW_MS + 50);

    expect((await store.increment(key, WINDOW_MS)).count).toBe(1);
  });

  it('keeps the window fixed from the first hit instead of extending it on every hit', async () => {
    const key = uniqueKey('fixed');
    await store.increment(key, WINDOW_MS);
    await sleep(WINDOW_MS / 2);
    await store.increment(key, WINDOW_MS);

    await sleep(WINDOW_MS / 2 + 50);

    expect((await store.increment(key, WINDOW_MS)).count).toBe(1);
  });

  it('clears a key on reset', async () => {
    const key = uniqueKey('reset');
    await store.increment(key, 60_000);
    await store.increment(key, 60_000);

    await store.reset(key);

    expect((await store.increment(key, 60_000)).count).toBe(1);
  });

  it('peeks at the current count without adding a hit', async () => {
    const key = uniqueKey('peek');
    await store.increment(key, 60_000);
    await store.increment(key, 60_000);

    const peeked = [await store.peek(key), await store.peek(key)];

    expect(peeked).toEqual([2, 2]);
    expect((await store.increment(key, 60_000)).count).toBe(3);
  });

  it('peeks 0 at a key that was never counted or whose window has passed', async () => {
    const key = uniqueKey('peek-expired');
    await store.increment(key, WINDOW_MS);
    expect(await store.peek(uniqueKey('peek-never'))).toBe(0);

    await sleep(WINDOW_MS + 50);

    expect(await store.peek(key)).toBe(0);
  });

  it('accepts a reset of a key that was never counted', async () => {
    await expect(store.reset(uniqueKey('never'))).resolves.toBeUndefined();
  });

  it('counts each key on its own', async () => {
    const first = uniqueKey('first');
    const second = uniqueKey('second');
    await store.increment(first, 60_000);
    await store.increment(first, 60_000);

    const hit = await store.increment(second, 60_000);
    await store.reset(second);

    expect(hit.count).toBe(1);
    expect((await store.increment(first, 60_000)).count).toBe(3);
  });

  it('counts every one of many concurrent hits exactly once', async () => {
    const key = uniqueKey('concurrent');

    const hits = await Promise.all(Array.from({ length: 50 }, () => store.increment(key, 60_000)));

    expect(hits.map((hit) => hit.count).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, index) => index + 1),
    );
  });

  if (backend.raw) {
    const raw = backend.raw;

    it('leaves every counter key in Redis with an expiry', async () => {
      const key = uniqueKey('expiry');

      await store.increment(key, 60_000);

      const ttl = await raw.redis().pttl(raw.keyOf(key));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('gives a window to a counter key that was left without an expiry', async () => {
      const key = uniqueKey('no-expiry');
      await raw.redis().set(raw.keyOf(key), 7);

      const hit = await store.increment(key, 60_000);

      expect(hit.count).toBe(8);
      expect(await raw.redis().pttl(raw.keyOf(key))).toBeGreaterThan(0);
    });
  }
});
