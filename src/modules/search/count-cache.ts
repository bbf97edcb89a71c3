/**
 * Counts kept for a while and dropped whenever what they count changes. Listing every visible
 * package (the empty search) needs the number of public packages: an exact COUNT walks ~100,000 index
 * entries each time (20 ms on an idle MariaDB, 50–80 ms under load). Within one service every change
 * that can move that number (create, delete, visibility change) calls `invalidate()` (the caller
 * relays it to the other workers of a cluster), so the count is exact there.
 *
 * The lifetimes bound how long a change made by another process sharing the database can go unseen:
 * a count younger than `freshMs` is answered as it is; an older one, up to `staleMs`, is answered at
 * once while a single re-count runs in the background (no request waits for it); past `staleMs`, or
 * after an invalidation, the request waits for a new count.
 */
export interface CountCacheLifetimes {
  freshMs: number;
  staleMs: number;
}

interface Entry {
  count: number;
  loadedAt: number;
  refreshing: boolean;
}

export class CountCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation, so a count that was being read across one is not kept. */
  private generation = 0;

  constructor(
    private readonly lifetimes: CountCacheLifetimes,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, load: () => Promise<number>): Promise<number> {
    const entry = this.entries.get(key);
    const age = entry ? this.now() - entry.loadedAt : Infinity;
    if (entry && age < this.lifetimes.freshMs) return entry.count;
    if (entry && age < this.lifetimes.staleMs) {
      if (!entry.refreshing) {
        entry.refreshing = true;
        // A failed re-count leaves the entry as it was; once it is too old, a request waits and sees the error.
        this.load(key, load).catch(() => {
          entry.refreshing = false;
        });
      }
      return entry.count;
    }
    return this.load(key, load);
  }

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private async load(key: string, load: () => Promise<number>): Promise<number> {
    const generation = this.generation;
    const count = await load();
    if (generation === this.generation) this.entries.set(key, { count, loadedAt: this.now(), refreshing: false });
    return count;
  }
}
