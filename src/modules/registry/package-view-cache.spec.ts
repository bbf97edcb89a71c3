import { LocalMessageBroker } from '../../broker/index.js';
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

  it('drops a view when another registry process announces a change of its package', async () => {
    // One broker for both: what Redis pub/sub (or the cluster primary's relay) does between processes.
    const broker = new LocalMessageBroker();
    const here = new PackageViewCache(broker);
    const there = new PackageViewCache(broker);
    await Promise.all([here.onModuleInit(), there.onModuleInit()]);
    here.set('id-1', 'cloudm', { yanked: false }, here.snapshot());
    there.invalidate('id-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(here.get('cloudm')).toBeUndefined();
  });

  it('drops every view when another registry process clears its cache', async () => {
    const broker = new LocalMessageBroker();
    const here = new PackageViewCache(broker);
    const there = new PackageViewCache(broker);
    await Promise.all([here.onModuleInit(), there.onModuleInit()]);
    here.set('id-1', 'a', 1, here.snapshot());
    there.clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(here.get('a')).toBeUndefined();
  });
});
