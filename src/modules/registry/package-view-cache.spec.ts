import { PackageViewCache } from './package-view-cache.js';

describe('PackageViewCache', () => {
  it('returns a stored view within its lifetime', () => {
    const cache = new PackageViewCache();
    cache.set('id-1', 'cloudm', { name: 'CloudM' }, cache.snapshot(), 1000);
    expect(cache.get('cloudm', 2000)).toEqual({ name: 'CloudM' });
  });

  it('forgets a view after 30 seconds', () => {
    const cache = new PackageViewCache();
    cache.set('id-1', 'cloudm', { name: 'CloudM' }, cache.snapshot(), 1000);
    expect(cache.get('cloudm', 31_001)).toBeUndefined();
  });

  it('drops a view when its package is invalidated by id', () => {
    const cache = new PackageViewCache();
    cache.set('id-1', 'cloudm', { name: 'CloudM' }, cache.snapshot());
    cache.invalidate('id-1');
    expect(cache.get('cloudm')).toBeUndefined();
  });

  it('clears every view', () => {
    const cache = new PackageViewCache();
    cache.set('id-1', 'a', 1, cache.snapshot());
    cache.set('id-2', 'b', 2, cache.snapshot());
    cache.clear();
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, undefined]);
  });

  it('does not store a view read before an invalidation that happened while it was being built', () => {
    const cache = new PackageViewCache();
    const snapshot = cache.snapshot();
    cache.invalidate('id-1');
    cache.set('id-1', 'cloudm', { total_downloads: 1 }, snapshot);
    expect(cache.get('cloudm')).toBeUndefined();
  });
});
