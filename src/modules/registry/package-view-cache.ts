import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { LocalMessageBroker, MESSAGE_BROKER, type MessageBroker } from '../../broker/index.js';

/** A backstop only: every change is announced at once; this bounds a view kept through a lost announcement. */
const TIME_TO_LIVE_MS = 30_000;
const CACHE_TOPIC = 'registry.package-view';
const MAX_ENTRIES = 20_000;

interface Entry {
  packageId: string;
  expiresAt: number;
  view: unknown;
}

/**
 * Detail views of public packages, the registry's hottest read (every client update check and page view), kept
 * as the JSON text answered.
 * Only public packages are cached, because their view is the same for every caller. This process
 * invalidates an entry on every change it makes (events, download counts, publisher status) and announces
 * it through the platform's message broker, so every registry process drops it too: Redis pub/sub reaches
 * every node sharing the database, the primary's relay the other workers of a clustered registry.
 */
@Injectable()
export class PackageViewCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PackageViewCache');
  private readonly byName = new Map<string, Entry>();
  private readonly nameById = new Map<string, string>();
  /** Bumped by every invalidation, so a view read before a change is never stored after it. */
  private generation = 0;

  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(@Optional() @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker = new LocalMessageBroker()) {}

  /** Changes made by another registry process (another node, or another worker of this one). */
  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.broker.subscribe(CACHE_TOPIC, (message) => {
      const { packageId } = message as { packageId: string | null };
      if (packageId === null) this.clearLocal();
      else this.invalidateLocal(packageId);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.unsubscribe?.();
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

  /** Drops the view here at once; resolves once every other registry process has been told (never rejects). */
  invalidate(packageId: string): Promise<void> {
    this.invalidateLocal(packageId);
    return this.announce(packageId);
  }

  clear(): Promise<void> {
    this.clearLocal();
    return this.announce(null);
  }

  /**
   * Tells every registry process; this one has already dropped the view (its own delivery changes nothing). The
   * change's answer waits for it: Redis has handed the announcement to every node before the client hears back,
   * so its next read on another node finds the view gone.
   */
  private announce(packageId: string | null): Promise<void> {
    return this.broker.publish(CACHE_TOPIC, { packageId }).catch((error: unknown) => {
      // The change is committed; other processes keep their view until its lifetime ends.
      this.logger.warn(`could not announce a package change to the other registry processes: ${String(error)}`);
    });
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
