import { Injectable } from '@nestjs/common';
import { publish, subscribe } from '../../cluster/cluster-bus.js';

const TIME_TO_LIVE_MS = 30_000;
const CACHE_CHANNEL = 'registry.package-view';
const MAX_ENTRIES = 20_000;

interface Entry {
  packageId: string;
  expiresAt: number;
  view: unknown;
}

/**
 * Detail views of public packages, the registry's hottest read (every client update check and page view).
 * Only public packages are cached, because their view is the same for every caller. This process
 * invalidates an entry on every change it makes (events, download counts, publisher status) and tells
 * the other workers of a clustered registry; a separate process sharing the database sees the change
 * within the 30-second lifetime.
 */
@Injectable()
export class PackageViewCache {
  private readonly byName = new Map<string, Entry>();
  private readonly nameById = new Map<string, string>();
  /** Bumped by every invalidation, so a view read before a change is never stored after it. */
  private generation = 0;

  constructor() {
    // Changes made by another worker of a clustered registry.
    subscribe(CACHE_CHANNEL, (message) => {
      const { packageId } = message as { packageId: string | null };
      if (packageId === null) this.clearLocal();
      else this.invalidateLocal(packageId);
    });
  }

  get(nameLower: string, now = Date.now()): unknown {
    const entry = this.byName.get(nameLower);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.delete(nameLower, entry.packageId);
      return undefined;
    }
    return entry.view;
  }

  /** Call before reading the data a view is built from; pass the result to `set`. */
  snapshot(): number {
    return this.generation;
  }

  /** Stores the view unless something was invalidated since `snapshot` (the view may be stale). */
  set(packageId: string, nameLower: string, view: unknown, snapshot: number, now = Date.now()): void {
    if (snapshot !== this.generation) return;
    if (this.byName.size >= MAX_ENTRIES) {
      const oldest = this.byName.keys().next().value as string;
      this.delete(oldest, this.byName.get(oldest)!.packageId);
    }
    this.byName.delete(nameLower);
    this.byName.set(nameLower, { packageId, expiresAt: now + TIME_TO_LIVE_MS, view });
    this.nameById.set(packageId, nameLower);
  }

  invalidate(packageId: string): void {
    this.invalidateLocal(packageId);
    publish(CACHE_CHANNEL, { packageId });
  }

  clear(): void {
    this.clearLocal();
    publish(CACHE_CHANNEL, { packageId: null });
  }

  private invalidateLocal(packageId: string): void {
    this.generation += 1;
    const name = this.nameById.get(packageId);
    if (name !== undefined) this.delete(name, packageId);
  }

  private clearLocal(): void {
    this.generation += 1;
    this.byName.clear();
    this.nameById.clear();
  }

  private delete(nameLower: string, packageId: string): void {
    this.byName.delete(nameLower);
    this.nameById.delete(packageId);
  }
}
