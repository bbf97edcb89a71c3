import { warmUp, type WarmUpDeps } from './proxy-warm-up.js';

interface Target {
  id: string;
}

/**
 * A proxy over a ring of ports that takes them in turn, one request at a time: a port whose worker is live answers
 * (its count grows), any other passes the request on. A fake clock: sleeping advances it.
 */
function ringProxy(ring: string[], options: { skippedUntil?: Record<string, number> } = {}) {
  const counts = new Map<string, number>();
  let clock = 0;
  let next = 0;
  const sent: number[] = [];
  const deps: WarmUpDeps<Target> = {
    send: () => {
      sent.push(clock);
      for (let tries = 0; tries < ring.length; tries++) {
        const port = ring[next++ % ring.length];
        if (port.startsWith('free')) continue;
        if ((options.skippedUntil?.[port] ?? 0) > clock) continue;
        counts.set(port, (counts.get(port) ?? 0) + 1);
        break;
      }
      clock += 1;
      return Promise.resolve(true);
    },
    proxiedCount: (target) => Promise.resolve(counts.get(target.id) ?? 0),
    now: () => clock,
    sleep: (ms) => {
      clock += ms;
      return Promise.resolve();
    },
  };
  return { deps, sent, counts };
}

const options = { until: 'each' as const, limitMs: 6_500, burstRequests: 12, pauseMs: 100 };

describe('warmUp', () => {
  it('sends requests until the proxy has used each new worker, then stops', async () => {
    const proxy = ringProxy(['old-a', 'free-1', 'new-c', 'old-b', 'new-d', 'free-2']);
    const { first, done } = warmUp([{ id: 'new-c' }, { id: 'new-d' }], proxy.deps, options);
    await first;
    const result = await done;
    expect(result.unused).toEqual([]);
    expect(result.requestsSent).toBe(4);
    expect(proxy.counts.get('new-c')).toBe(1);
    expect(proxy.counts.get('new-d')).toBe(1);
  });

  it('sends nothing when the proxy already uses every worker (traffic did it)', async () => {
    const proxy = ringProxy(['new-c']);
    await proxy.deps.send();
    const result = await warmUp([{ id: 'new-c' }], proxy.deps, options).done;
    expect(result).toEqual({ unused: [], requestsSent: 0, proxyReached: true });
  });

  it('resolves `first` once one worker is used while it goes on for the others', async () => {
    const proxy = ringProxy(['new-c', 'new-d'], { skippedUntil: { 'new-d': 1_000 } });
    const { first, done } = warmUp([{ id: 'new-c' }, { id: 'new-d' }], proxy.deps, options);
    const seenAtFirst = await first.then(() => ({ c: proxy.counts.get('new-c'), d: proxy.counts.get('new-d') }));
    expect(seenAtFirst.c).toBeGreaterThan(0);
    expect(seenAtFirst.d).toBeUndefined();
    expect((await done).unused).toEqual([]);
    expect(proxy.counts.get('new-d')).toBe(1);
  });

  it('with `one`, stops as soon as the proxy has used one of them', async () => {
    const proxy = ringProxy(['new-c', 'new-d']);
    const result = await warmUp([{ id: 'new-c' }, { id: 'new-d' }], proxy.deps, { ...options, until: 'one' }).done;
    expect(result).toEqual({ unused: [{ id: 'new-d' }], requestsSent: 1, proxyReached: true });
  });

  it('paces the requests after the first round: a port skipped for seconds costs tens of requests, not thousands', async () => {
    const proxy = ringProxy(['old-a', 'new-c'], { skippedUntil: { 'new-c': 5_000 } });
    const result = await warmUp([{ id: 'new-c' }], proxy.deps, options).done;
    expect(result.unused).toEqual([]);
    expect(result.requestsSent).toBeLessThan(12 + 5_000 / 100 + 2);
    const paced = proxy.sent.slice(12);
    for (let i = 1; i < paced.length; i++) expect(paced[i] - paced[i - 1]).toBeGreaterThanOrEqual(100);
  });

  it('resolves `round` after the back-to-back requests while a skipped port waits for the paced ones', async () => {
    const proxy = ringProxy(['old-a', 'new-c'], { skippedUntil: { 'new-c': 3_000 } });
    const { round, done } = warmUp([{ id: 'new-c' }], proxy.deps, options);
    const sentAtRound = await round.then(() => proxy.sent.length);
    expect(sentAtRound).toBe(12);
    expect(proxy.counts.get('new-c')).toBeUndefined();
    expect((await done).unused).toEqual([]);
  });

  it('gives up at the limit and names the workers the proxy never used', async () => {
    const proxy = ringProxy(['old-a', 'free-1']);
    const result = await warmUp([{ id: 'new-c' }], proxy.deps, options).done;
    expect(result.unused).toEqual([{ id: 'new-c' }]);
    expect(proxy.deps.now()).toBeGreaterThanOrEqual(6_500);
    expect(proxy.deps.now()).toBeLessThan(6_700);
  });

  it('stops when the manager stops', async () => {
    const proxy = ringProxy(['old-a']);
    let stopped = false;
    const { done } = warmUp(
      [{ id: 'new-c' }],
      { ...proxy.deps, send: () => ((stopped = true), proxy.deps.send()) },
      options,
      () => stopped,
    );
    expect((await done).requestsSent).toBe(1);
  });

  it('stops at the first request when the proxy cannot be reached (nginx not running)', async () => {
    const proxy = ringProxy(['new-c']);
    const result = await warmUp([{ id: 'new-c' }], { ...proxy.deps, send: () => Promise.resolve(false) }, options).done;
    expect(result).toEqual({ unused: [{ id: 'new-c' }], requestsSent: 1, proxyReached: false });
  });

  it('has nothing to do without workers', async () => {
    const proxy = ringProxy(['old-a']);
    const { first, done } = warmUp([], proxy.deps, options);
    await first;
    expect(await done).toEqual({ unused: [], requestsSent: 0, proxyReached: true });
  });
});
