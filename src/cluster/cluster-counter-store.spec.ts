import { MemoryCounterStore } from '../counters/counter-store.js';
import { ClusterCounterStore, applyCounterFlush } from './cluster-counter-store.js';

/** Two workers and a primary wired together in memory, as node:cluster would over IPC. */
function cluster() {
  const primary = new MemoryCounterStore();
  const receivers: Array<(message: unknown) => void> = [];
  const worker = (index: number) =>
    new ClusterCounterStore(
      (message) => void applyCounterFlush(message, primary).then((state) => receivers[index](state)),
      (receive) => (receivers[index] = receive),
    );
  return { primary, workers: [worker(0), worker(1)] };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('ClusterCounterStore', () => {
  it("counts one worker's hits immediately, before the primary has confirmed them", async () => {
    const { workers } = cluster();
    const counts = [];
    for (let index = 0; index < 3; index += 1) counts.push((await workers[0].increment('ip:1', 60_000)).count);
    expect(counts).toEqual([1, 2, 3]);
  });

  it("includes the other worker's hits once its own next flush has gone round", async () => {
    const { workers } = cluster();
    await workers[1].increment('ip:1', 60_000);
    await settle();
    await workers[0].increment('ip:1', 60_000);
    await settle();
    expect((await workers[0].increment('ip:1', 60_000)).count).toBe(3);
  });

  it('keeps the shared count in the primary', async () => {
    const { primary, workers } = cluster();
    for (let index = 0; index < 4; index += 1) await workers[index % 2].increment('user:7', 60_000);
    await settle();
    expect((await primary.increment('user:7', 60_000)).count).toBe(5);
  });

  it('starts a new window after the old one ends', async () => {
    const { workers } = cluster();
    await workers[0].increment('ip:2', 50);
    await settle();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await workers[0].increment('ip:2', 50)).count).toBe(1);
  });

  it("peeks at the shared count, including another worker's hits", async () => {
    const { workers } = cluster();
    await workers[1].increment('deny:session-1', 60_000);
    await settle();
    expect(await workers[0].peek('deny:session-1')).toBe(1);
  });

  it('peeks 0 at a key no worker has counted', async () => {
    const { workers } = cluster();
    expect(await workers[0].peek('deny:never')).toBe(0);
  });

  it("peeks after the worker's own unflushed hits have reached the primary", async () => {
    const { workers } = cluster();
    await workers[0].increment('deny:session-2', 60_000);
    expect(await workers[0].peek('deny:session-2')).toBe(1);
  });
});
