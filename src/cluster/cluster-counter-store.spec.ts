import { jest } from '@jest/globals';
import { MemoryCounterStore } from '../counters/counter-store.js';
import { ClusterCounterStore, applyCounterFlush } from './cluster-counter-store.js';

/** Two workers and a primary wired together in memory, as node:cluster would over IPC (a later tick each way). */
function cluster() {
  const primary = new MemoryCounterStore();
  const receivers: Array<(message: unknown) => void> = [];
  const worker = (index: number) =>
    new ClusterCounterStore(
      (message) =>
        setImmediate(
          () =>
            void applyCounterFlush(structuredClone(message), primary).then((state) =>
              setImmediate(() => receivers[index](structuredClone(state))),
            ),
        ),
      (receive) => (receivers[index] = receive),
    );
  return { primary, workers: [worker(0), worker(1)] };
}

describe('ClusterCounterStore', () => {
  it('gives every hit its own shared count when both workers take hits at once', async () => {
    const { workers } = cluster();
    const hits = await Promise.all(
      Array.from({ length: 30 }, (_, index) => workers[index % 2].increment('ip:1', 60_000)),
    );
    expect(hits.map((hit) => hit.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('admits exactly the limit of requests alternating between the workers', async () => {
    const { workers } = cluster();
    let admitted = 0;
    for (let index = 0; index < 30; index += 1) {
      if ((await workers[index % 2].increment('ip:2', 60_000)).count <= 20) admitted += 1;
    }
    expect(admitted).toBe(20);
  });

  it("sees the other worker's hits at once", async () => {
    const { workers } = cluster();
    await workers[1].increment('ip:3', 60_000);
    await workers[1].increment('ip:3', 60_000);
    expect((await workers[0].increment('ip:3', 60_000)).count).toBe(3);
  });

  it('keeps the shared count in the primary', async () => {
    const { primary, workers } = cluster();
    for (let index = 0; index < 4; index += 1) await workers[index % 2].increment('user:7', 60_000);
    expect((await primary.increment('user:7', 60_000)).count).toBe(5);
  });

  it('starts a new window after the old one ends', async () => {
    const { workers } = cluster();
    await workers[0].increment('ip:4', 50);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await workers[0].increment('ip:4', 50)).count).toBe(1);
  });

  it('applies a reset before the hits that follow it', async () => {
    const { workers } = cluster();
    await workers[0].increment('ip:5', 60_000);
    const [, hit] = await Promise.all([workers[1].reset('ip:5'), workers[1].increment('ip:5', 60_000)]);
    expect(hit.count).toBe(1);
  });

  it("peeks at the shared count, including another worker's hits", async () => {
    const { workers } = cluster();
    await workers[1].increment('deny:session-1', 60_000);
    expect(await workers[0].peek('deny:session-1')).toBe(1);
  });

  it('peeks 0 at a key no worker has counted', async () => {
    const { workers } = cluster();
    expect(await workers[0].peek('deny:never')).toBe(0);
  });

  it('fails a hit when the primary does not answer, instead of hanging the request', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const silent = new ClusterCounterStore(
        () => undefined,
        () => undefined,
      );
      const hit = silent.increment('ip:6', 60_000);
      await new Promise((resolve) => setImmediate(resolve));
      jest.advanceTimersByTime(5_001);
      await expect(hit).rejects.toThrow(/did not answer a counter request within 5000 ms/);
    } finally {
      jest.useRealTimers();
    }
  });
});
