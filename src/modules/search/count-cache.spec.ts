import { jest } from '@jest/globals';
import { CountCache } from './count-cache.js';

describe('CountCache', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 0;
  });

  it('answers a second request for the same key without loading again', async () => {
    const cache = new CountCache(1000, now);
    const load = jest.fn(async () => 7);
    await cache.get('public', load);
    expect(await cache.get('public', load)).toBe(7);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('keeps counts of different keys apart', async () => {
    const cache = new CountCache(1000, now);
    await cache.get('public', async () => 7);
    expect(await cache.get('public:theme', async () => 2)).toBe(2);
  });

  it('loads again once the lifetime has passed', async () => {
    const cache = new CountCache(1000, now);
    await cache.get('public', async () => 7);
    clock = 1000;
    expect(await cache.get('public', async () => 8)).toBe(8);
  });

  it('loads again after an invalidation', async () => {
    const cache = new CountCache(1000, now);
    await cache.get('public', async () => 7);
    cache.invalidate();
    expect(await cache.get('public', async () => 8)).toBe(8);
  });

  it('does not keep a count whose read overlapped an invalidation', async () => {
    const cache = new CountCache(1000, now);
    await cache.get('public', async () => {
      cache.invalidate();
      return 7;
    });
    expect(await cache.get('public', async () => 8)).toBe(8);
  });
});
