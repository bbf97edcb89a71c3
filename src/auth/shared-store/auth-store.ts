import type { Redis } from 'ioredis';
import { LessThanOrEqual, MoreThan, type DataSource, type Repository } from 'typeorm';
import { AuthStoreEntryEntity } from './auth-store-entry.entity.js';

/**
 * The shared store of short-lived authentication state: token and session revocations, OAuth states,
 * magic-link tokens. Every entry has a TTL. Redis when REDIS_URL is set, else the platform database, so
 * N workers behind one proxy agree; the memory driver is for a lone process without a database (unit tests).
 */
export const AUTH_STORE = Symbol('AUTH_STORE');

export interface AuthStore {
  readonly driver: 'redis' | 'database' | 'memory';
  /** Stores `value` under `key` for `ttlMs` (replacing an earlier value). */
  put(key: string, value: string, ttlMs: number): Promise<void>;
  /** The live value, or null when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Reads and deletes in one step: of concurrent callers exactly one gets the value (single-use tokens). */
  take(key: string): Promise<string | null>;
  delete(key: string): Promise<void>;
}

/** Keys are bounded so the database driver can index them. */
export const AUTH_STORE_MAX_KEY_LENGTH = 191;

function checkKey(key: string): void {
  if (key.length === 0 || key.length > AUTH_STORE_MAX_KEY_LENGTH)
    throw new Error(`AuthStore keys are 1 to ${AUTH_STORE_MAX_KEY_LENGTH} characters long`);
}

function checkTtl(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new Error('AuthStore entries need a positive TTL');
  return Math.ceil(ttlMs);
}

export class RedisAuthStore implements AuthStore {
  readonly driver = 'redis' as const;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private full(key: string): string {
    checkKey(key);
    return `${this.prefix}:auth:${key}`;
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.full(key), value, 'PX', checkTtl(ttlMs));
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.full(key));
  }

  async take(key: string): Promise<string | null> {
    // GET + DEL in one transaction (GETDEL needs Redis 6.2): only the caller whose DEL removed the key wins.
    const results = await this.redis.multi().get(this.full(key)).del(this.full(key)).exec();
    if (!results) throw new Error('Redis transaction aborted');
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
    return Number(results[1][1]) === 1 ? (results[0][1] as string | null) : null;
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.full(key));
  }
}

/** The `auth_store_entries` table; expired rows are ignored on read and swept now and then on write. */
export class DatabaseAuthStore implements AuthStore {
  readonly driver = 'database' as const;
  private readonly entries: Repository<AuthStoreEntryEntity>;
  private lastSweep = 0;

  constructor(
    dataSource: DataSource,
    private readonly sweepEveryMs = 60_000,
  ) {
    this.entries = dataSource.getRepository(AuthStoreEntryEntity);
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    checkKey(key);
    const expiresAt = new Date(Date.now() + checkTtl(ttlMs));
    await this.sweep();
    await this.entries.upsert({ key, value, expiresAt }, ['key']);
  }

  async get(key: string): Promise<string | null> {
    checkKey(key);
    const entry = await this.entries.findOneBy({ key, expiresAt: MoreThan(new Date()) });
    return entry?.value ?? null;
  }

  async take(key: string): Promise<string | null> {
    const value = await this.get(key);
    if (value === null) return null;
    // Of concurrent takers only the one whose DELETE removed the row wins.
    const result = await this.entries.delete({ key });
    return result.affected === 1 ? value : null;
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.entries.delete({ key });
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSweep < this.sweepEveryMs) return;
    this.lastSweep = now;
    await this.entries.delete({ expiresAt: LessThanOrEqual(new Date(now)) });
  }
}

export class MemoryAuthStore implements AuthStore {
  readonly driver = 'memory' as const;
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();
  private lastSweep = Date.now();

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    checkKey(key);
    const now = Date.now();
    // Expired entries go now and then, so idle keys do not accumulate.
    if (now - this.lastSweep >= 60_000) {
      this.lastSweep = now;
      for (const [other, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(other);
    }
    this.entries.set(key, { value, expiresAt: now + checkTtl(ttlMs) });
  }

  async get(key: string): Promise<string | null> {
    checkKey(key);
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : null;
  }

  async take(key: string): Promise<string | null> {
    checkKey(key);
    // No await between the read and the delete: one taker only.
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : null;
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
}
