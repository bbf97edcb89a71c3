/**
 * Counts kept for a short while and dropped whenever what they count changes. Listing every visible
 * package (the empty search) needs the number of public packages: an exact COUNT walks ~100,000 index
 * entries each time (70–85 ms on MariaDB). Within one process every change that can move that number
 * (create, delete, visibility change) calls `invalidate()`, so the count is exact here; the lifetime
 * bounds how long another process's change (a clustered worker) can go unseen.
 */
export class CountCache {
  private readonly entries = new Map<string, { count: number; expiresAt: number }>();
  /** Bumped by every invalidation, so a count that was being read across one is not kept. */
  private generation = 0;

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, load: () => Promise<number>): Promise<number> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return entry.count;
    const generation = this.generation;
    const count = await load();
    if (generation === this.generation) this.entries.set(key, { count, expiresAt: this.now() + this.lifetimeMs });
    return count;
  }

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
