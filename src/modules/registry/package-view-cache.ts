import { Injectable } from '@nestjs/common';

const TIME_TO_LIVE_MS = 5_000;
const MAX_ENTRIES = 20_000;

interface Entry {
  packageId: string;
  expiresAt: number;
  view: unknown;
}

/**
 * Detail views of public packages, the registry's hottest read (every client update check and page view).
 * Only public packages are cached, because their view is the same for every caller. This process
 * invalidates an entry on every change it makes (events, download counts, publisher status); another
 * process sharing the database sees the change within the five-second lifetime.
 */
@Injectable()
export class PackageViewCache {
  private readonly byName = new Map<string, Entry>();
  private readonly nameById = new Map<string, string>();

  get(nameLower: string, now = Date.now()): unknown {
    const entry = this.byName.get(nameLower);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.delete(nameLower, entry.packageId);
      return undefined;
    }
    return entry.view;
  }

  set(packageId: string, nameLower: string, view: unknown, now = Date.now()): void {
    if (this.byName.size >= MAX_ENTRIES) {
      const oldest = this.byName.keys().next().value as string;
      this.delete(oldest, this.byName.get(oldest)!.packageId);
    }
    this.byName.delete(nameLower);
    this.byName.set(nameLower, { packageId, expiresAt: now + TIME_TO_LIVE_MS, view });
    this.nameById.set(packageId, nameLower);
  }

  invalidate(packageId: string): void {
    const name = this.nameById.get(packageId);
    if (name !== undefined) this.delete(name, packageId);
  }

  clear(): void {
    this.byName.clear();
    this.nameById.clear();
  }

  private delete(nameLower: string, packageId: string): void {
    this.byName.delete(nameLower);
    this.nameById.delete(packageId);
  }
}
