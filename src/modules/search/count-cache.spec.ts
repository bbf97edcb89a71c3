import { jest } from '@jest/globals';
import { CountCache } from './count-cache.js';

describe('CountCache', () => {
  let clock = 0;
  const now = () => clock;
  const lifetimes = { freshMs: 1000, staleMs: 10_000 };
  beforeEach(() => {
    clock = 0;
  });

  /** Lets a background re-count settle. */
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('answers a second request for the same key without loading again', async () => {
    const cache = new CountCache(lifetimes, now);
    const load = jest.fn(async () => 7);
    await cache.get('public', load);
    expect(await cache.get('public', load)).toBe(7);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('keeps counts of different keys apart', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    expect(await cache.get('public:theme', async () => 2)).toBe(2);
  });

  it('answers an old count at once and re-counts once in the background', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    clock = 1000;
    let finish: (count: number) => void = () => undefined;
    const load = jest.fn(() => new Promise<number>((resolve) => (finish = resolve)));
    expect(await cache.get('public', load)).toBe(7);
    expect(await cache.get('public', load)).toBe(7);
    expect(load).toHaveBeenCalledTimes(1);
    finish(8);
    await settled();
    expect(await cache.get('public', load)).toBe(8);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('waits for a new count once the count is older than the stale lifetime', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    clock = 10_000;
    expect(await cache.get('public', async () => 8)).toBe(8);
  });

  it('keeps the old count when a background re-count fails, and tries again later', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    clock = 2000;
    expect(await cache.get('public', async () => Promise.reject(new Error('database gone')))).toBe(7);
    await settled();
    expect(await cache.get('public', async () => 9)).toBe(7);
    await settled();
    expect(await cache.get('public', async () => 10)).toBe(9);
  });

  it('surfaces a failing count once no count is young enough to answer', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    clock = 20_000;
    await expect(cache.get('public', async () => Promise.reject(new Error('database gone')))).rejects.toThrow(
      'database gone',
    );
  });

  it('loads again after an invalidation, without answering the old count', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    cache.invalidate();
    expect(await cache.get('public', async () => 8)).toBe(8);
  });

  it('does not keep a count whose read overlapped an invalidation', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => {
      cache.invalidate();
      return 7;
    });
    expect(await cache.get('public', async () => 8)).toBe(8);
  });

  it('does not keep a background re-count that overlapped an invalidation', async () => {
    const cache = new CountCache(lifetimes, now);
    await cache.get('public', async () => 7);
    clock = 2000;
    let finish: (count: number) => void = () => undefined;
    expect(await cache.get('public', () => new Promise<number>((resolve) => (finish = resolve)))).toBe(7);
    cache.invalidate();
    finish(8);
    await settled();
    expect(await cache.get('public', async () => 9)).toBe(9);
  });
});
