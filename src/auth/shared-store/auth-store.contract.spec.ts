import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../../database/data-source-options.js';
import { DatabaseAuthStore, MemoryAuthStore, RedisAuthStore, type AuthStore } from './auth-store.js';
import { Revocations } from './revocations.js';

/**
 * One contract for every AuthStore driver: memory, the database on SQLite and (TEST_MYSQL_URL) MySQL, and
 * (TEST_REDIS_URL) Redis. A configured backend that cannot be reached fails the suite, never skips it.
 */
interface StoreBackend {
  open(): Promise<AuthStore>;
  /** A second handle on the same storage, as another worker process would have. */
  another(): Promise<AuthStore>;
  dispose(): Promise<void>;
}

function memoryBackend(): StoreBackend {
  const store = new MemoryAuthStore();
  return { open: async () => store, another: async () => store, dispose: async () => undefined };
}

function databaseBackend(location: () => Promise<{ type: 'sqlite' | 'mysql'; location: string }>): StoreBackend {
  const sources: DataSource[] = [];
  let target: { type: 'sqlite' | 'mysql'; location: string } | null = null;
  const connect = async () => {
    const dataSource = new DataSource(createDataSourceOptions(target!));
    await dataSource.initialize();
    sources.push(dataSource);
    return dataSource;
  };
  return {
    async open() {
      target = await location();
      const first = await connect();
      await first.runMigrations();
      return new DatabaseAuthStore(first, 0);
    },
    async another() {
      return new DatabaseAuthStore(await connect(), 0);
    },
    async dispose() {
      for (const source of sources) await source.destroy();
    },
  };
}

function sqliteBackend(): StoreBackend {
  const file = join(tmpdir(), `tb-authstore-${randomBytes(6).toString('hex')}.sqlite`);
  const backend = databaseBackend(async () => ({ type: 'sqlite', location: file }));
  return {
    ...backend,
    dispose: async () => {
      await backend.dispose();
      await rm(file, { force: true });
    },
  };
}

function mysqlBackend(mysqlUrl: string): StoreBackend {
  const base = new URL(mysqlUrl);
  const database = `${base.pathname.replace(/^\//, '') || 'toolbox_test'}_authstore_${randomBytes(4).toString('hex')}`;
  const server = `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`;
  const backend = databaseBackend(async () => {
    const admin = await createConnection({ uri: server });
    await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    const url = new URL(mysqlUrl);
    url.pathname = `/${database}`;
    return { type: 'mysql', location: url.toString() };
  });
  return {
    ...backend,
    async dispose() {
      await backend.dispose();
      const admin = await createConnection({ uri: server });
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    },
  };
}

function redisBackend(redisUrl: string): StoreBackend {
  const prefix = `tbtest-authstore-${randomBytes(6).toString('hex')}`;
  const clients: Redis[] = [];
  const connect = async () => {
    const redis = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2000,
    });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
    } catch (error) {
      throw new Error(`TEST_REDIS_URL is set but ${redisUrl} cannot be reached: ${(error as Error).message}`);
    }
    clients.push(redis);
    return new RedisAuthStore(redis, prefix);
  };
  return {
    open: connect,
    another: connect,
    async dispose() {
      const redis = clients[0];
      if (redis) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      for (const client of clients) client.disconnect();
    },
  };
}

const backends: Array<[string, () => StoreBackend]> = [
  ['MemoryAuthStore', memoryBackend],
  ['DatabaseAuthStore (SQLite)', sqliteBackend],
];
if (process.env.TEST_MYSQL_URL) {
  const url = process.env.TEST_MYSQL_URL;
  backends.push(['DatabaseAuthStore (MySQL)', () => mysqlBackend(url)]);
}
if (process.env.TEST_REDIS_URL) {
  const url = process.env.TEST_REDIS_URL;
  backends.push(['RedisAuthStore', () => redisBackend(url)]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let counter = 0;
const key = (label: string) => `spec:${label}:${++counter}:${randomBytes(3).toString('hex')}`;

describe.each(backends)('AuthStore contract: %s', (_name, createBackend) => {
  const backend = createBackend();
  let store: AuthStore;
  let other: AuthStore;

  beforeAll(async () => {
    store = await backend.open();
    other = await backend.another();
  });
  afterAll(() => backend.dispose());

  it('answers null for a key never stored', async () => {
    expect(await store.get(key('absent'))).toBeNull();
    expect(await store.take(key('absent'))).toBeNull();
  });

  it('stores a value that another handle on the same storage reads', async () => {
    const k = key('shared');
    await store.put(k, '{"email":"a@example.test"}', 60_000);
    expect(await other.get(k)).toBe('{"email":"a@example.test"}');
    expect(await store.get(k)).toBe('{"email":"a@example.test"}');
  });

  it('replaces the value of a key put again', async () => {
    const k = key('replace');
    await store.put(k, 'one', 60_000);
    await store.put(k, 'two', 60_000);
    expect(await store.get(k)).toBe('two');
  });

  it('forgets an entry when its TTL runs out', async () => {
    const k = key('ttl');
    await store.put(k, 'short', 300);
    expect(await store.get(k)).toBe('short');
    await sleep(1300);
    expect(await store.get(k)).toBeNull();
    expect(await store.take(k)).toBeNull();
  });

  it('take returns the value once, then never again (single use)', async () => {
    const k = key('take');
    await store.put(k, 'once', 60_000);
    expect(await store.take(k)).toBe('once');
    expect(await store.take(k)).toBeNull();
    expect(await other.get(k)).toBeNull();
  });

  it('of concurrent takers through two handles exactly one gets the value', async () => {
    for (let round = 0; round < 5; round += 1) {
      const k = key('race');
      await store.put(k, `v${round}`, 60_000);
      const results = await Promise.all([store.take(k), other.take(k), store.take(k), other.take(k)]);
      expect(results.filter((value) => value !== null)).toEqual([`v${round}`]);
    }
  });

  it('delete removes an entry', async () => {
    const k = key('delete');
    await store.put(k, 'x', 60_000);
    await other.delete(k);
    expect(await store.get(k)).toBeNull();
  });

  it('refuses empty or over-long keys and non-positive TTLs', async () => {
    await expect(store.put('', 'x', 1000)).rejects.toThrow('1 to 191');
    await expect(store.put('k'.repeat(192), 'x', 1000)).rejects.toThrow('1 to 191');
    await expect(store.put(key('ttl0'), 'x', 0)).rejects.toThrow('positive TTL');
  });

  describe('Revocations over this store', () => {
    it('a revocation made through one handle holds through the other, until the token would expire', async () => {
      const mine = new Revocations(store);
      const theirs = new Revocations(other);
      const jti = `jti-${randomBytes(4).toString('hex')}`;
      expect(await theirs.isRevoked('token', jti)).toBe(false);
      await mine.revoke('token', jti, Date.now() / 1000 + 1);
      expect(await theirs.isRevoked('token', jti)).toBe(true);
      // Kinds do not mix: a session id equal to the jti is not revoked.
      expect(await theirs.isRevoked('session', jti)).toBe(false);
      await sleep(2100);
      expect(await theirs.isRevoked('token', jti)).toBe(false);
    });

    it('does not store a revocation for what has already expired', async () => {
      const jti = `jti-${randomBytes(4).toString('hex')}`;
      await new Revocations(store).revoke('token', jti, Date.now() / 1000 - 5);
      expect(await store.get(`revoked:token:${jti}`)).toBeNull();
    });
  });
});
