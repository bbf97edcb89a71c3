import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { writeFileAtomically } from '../../common/atomic-write.js';
import type { FunctionEntry } from './function-entry.js';
import { Result } from './result.js';
import { stableStringify } from './stable-json.js';

/** Cache key of a call: module, function and the bound arguments as stable JSON. */
export function callCacheKey(entry: Pick<FunctionEntry, 'key'>, boundArguments: readonly unknown[]): string {
  return `${entry.key}:${stableStringify(boundArguments)}`;
}

/** One LRU per function, sized and timed by its `memoryCacheMaxSize` and `memoryCacheTtl` (seconds). */
export class MemoryFunctionCache {
  private readonly caches = new Map<string, LRUCache<string, { value: unknown }>>();

  get(entry: FunctionEntry, key: string): { value: unknown } | undefined {
    return this.caches.get(entry.key)?.get(key);
  }

  set(entry: FunctionEntry, key: string, value: unknown): void {
    let cache = this.caches.get(entry.key);
    if (!cache) {
      cache = new LRUCache<string, { value: unknown }>({
        max: Math.max(1, entry.options.memoryCacheMaxSize),
        ttl: Math.max(1, entry.options.memoryCacheTtl * 1000),
      });
      this.caches.set(entry.key, cache);
    }
    cache.set(key, { value });
  }

  /** Number of cached calls of one function (for tests and the footprint). */
  size(functionKey: string): number {
    return this.caches.get(functionKey)?.size ?? 0;
  }

  clear(functionKey?: string): void {
    if (functionKey) this.caches.delete(functionKey);
    else this.caches.clear();
  }
}

interface StoredCall {
  key: string;
  stored_at: string;
  kind: 'result' | 'raw';
  value: unknown;
}

/**
 * Results persisted as JSON under `<dataDir>/cache/functions/<module>/<function>/<sha256 of key>.json`,
 * so they survive a restart. Values must be JSON-serialisable; writes go through a temp file and a rename.
 */
export class FileFunctionCache {
  constructor(private readonly dataDir: string) {}

  directoryOf(entry: Pick<FunctionEntry, 'module' | 'functionName'>): string {
    return join(this.dataDir, 'cache', 'functions', safeSegment(entry.module), safeSegment(entry.functionName));
  }

  private pathOf(entry: FunctionEntry, key: string): string {
    return join(this.directoryOf(entry), `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  async get(entry: FunctionEntry, key: string): Promise<{ value: unknown } | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(entry, key), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const stored = JSON.parse(text) as StoredCall;
      if (stored.key !== key) return undefined;
      return { value: stored.kind === 'result' ? Result.fromWire(stored.value) : stored.value };
    } catch {
      return undefined; // a damaged entry is a miss; the next call rewrites it
    }
  }

  async set(entry: FunctionEntry, key: string, value: unknown): Promise<void> {
    const path = this.pathOf(entry, key);
    const stored: StoredCall = {
      key,
      stored_at: new Date().toISOString(),
      kind: value instanceof Result ? 'result' : 'raw',
      value: value instanceof Result ? value.toJSON() : value,
    };
    await writeFileAtomically(path, JSON.stringify(stored));
  }

  async clear(entry: Pick<FunctionEntry, 'module' | 'functionName'>): Promise<void> {
    await rm(this.directoryOf(entry), { recursive: true, force: true });
  }
}

function safeSegment(name: string): string {
  const cleaned = name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '_');
  return cleaned.length > 0 ? cleaned : '_';
}
