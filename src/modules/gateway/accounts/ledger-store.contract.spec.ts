import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { createConnection, createPool } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../../../config/config.js';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { GatewayLedger1763800001920 } from '../../../database/migrations/1763800001920-gateway-ledger.js';
import { MIGRATIONS } from '../../../database/migrations/index.js';
import {
  ledgerPoolOptions,
  ledgerStoreFor,
  type LedgerConnection,
  type LedgerPool,
  type LedgerRow,
  type LedgerStore,
} from './ledger-store.js';

/**
 * Both ledger stores against their real engines: SQLite in a temporary file, and MySQL/MariaDB in a database of
 * its own when TEST_MYSQL_URL is set. Each change is conditional and leaves `balance = Σ amount`, `held = Σ held`.
 */

interface Engine {
  name: string;
  open(migrations?: typeof MIGRATIONS): Promise<DataSource>;
  /** A datetime parameter as the engine's driver takes it (better-sqlite3 binds no Date). */
  now(): unknown;
  dispose(): Promise<void>;
}

function sqliteEngine(): Engine {
  const directory = mkdtempSync(join(tmpdir(), 'tb-ledger-'));
  const config: DatabaseConfig = { type: 'sqlite', location: join(directory, 'platform.sqlite') };
  return {
    name: 'sqlite',
    now: () => new Date().toISOString().replace('T', ' ').replace('Z', ''),
    async open(migrations = MIGRATIONS) {
      const dataSource = new DataSource({ ...createDataSourceOptions(config), migrations });
      await dataSource.initialize();
      await dataSource.runMigrations();
      return dataSource;
    },
    dispose: async () => rmSync(directory, { recursive: true, force: true }),
  };
}

function mysqlEngine(url: string): Engine {
  const server = new URL(url);
  const database = `${server.pathname.replace(/^\//, '') || 'toolbox_test'}_ledger_${randomBytes(4).toString('hex')}`;
  const root = `${server.protocol}//${server.username ? `${server.username}${server.password ? `:${server.password}` : ''}@` : ''}${server.host}/`;
  let created = false;
  return {
    name: 'mysql',
    now: () => new Date(),
    async open(migrations = MIGRATIONS) {
      if (!created) {
        const admin = await createConnection({ uri: root });
        await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
        await admin.end();
        created = true;
      }
      const location = new URL(url);
      location.pathname = `/${database}`;
      const config: DatabaseConfig = { type: 'mysql', location: location.toString() };
      const dataSource = new DataSource({ ...createDataSourceOptions(config), migrations });
      await dataSource.initialize();
      await dataSource.runMigrations();
      return dataSource;
    },
    async dispose() {
      if (!created) return;
      const admin = await createConnection({ uri: root });
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    },
  };
}

const engines = (): Engine[] =>
  process.env.TEST_MYSQL_URL ? [sqliteEngine(), mysqlEngine(process.env.TEST_MYSQL_URL)] : [sqliteEngine()];

/** A real ledger pool of `connections` connections that records every text it sends to the server. */
function countingPool(dataSource: DataSource, connections: number): { pool: LedgerPool; sent: string[] } {
  const inner = createPool({ ...ledgerPoolOptions(dataSource.options), connectionLimit: connections });
  const sent: string[] = [];
  const pool: LedgerPool = {
    async getConnection() {
      const connection = await inner.getConnection();
      const counted: LedgerConnection = {
        query: (sql, values) => {
          sent.push(sql);
          return connection.query(sql, values) as Promise<[unknown, unknown]>;
        },
        release: () => connection.release(),
        destroy: () => connection.destroy(),
      };
      return counted;
    },
    end: () => inner.end(),
  };
  return { pool, sent };
}

function row(userId: string, kind: LedgerRow['kind'], amountMicros: number, heldMicros: number): LedgerRow {
  return { id: randomUUID(), userId, kind, amountMicros, heldMicros, usageId: null, note: null, createdAt: new Date() };
}

describe.each(engines())('ledger store ($name)', (engine) => {
  let dataSource: DataSource;
  let store: LedgerStore;

  beforeAll(async () => {
    dataSource = await engine.open();
    store = ledgerStoreFor(dataSource);
  });

  afterAll(async () => {
    await store?.close();
    await dataSource?.destroy();
    await engine.dispose();
  });

  async function user(balanceMicros: number): Promise<string> {
    const id = randomUUID();
    await dataSource.query(
      'INSERT INTO gateway_users (id, email, tier, balance_micros, held_micros, active, created_at) VALUES (?, ?, ?, 0, 0, 1, ?)',
      [id, `${id}@example.com`, 'payg', engine.now()],
    );
    if (balanceMicros > 0) expect(await store.topUp(row(id, 'topup', balanceMicros, 0), 10 ** 15)).toBe(true);
    return id;
  }

  async function ledger(userId: string) {
    const [sums] = (await dataSource.query(
      'SELECT COALESCE(SUM(amount_micros), 0) AS amount, COALESCE(SUM(held_micros), 0) AS held FROM gateway_transactions WHERE user_id = ?',
      [userId],
    )) as Array<{ amount: string | number; held: string | number }>;
    const funds = await store.funds(userId);
    return { ...funds, rowsBalance: Number(sums.amount), rowsHeld: Number(sums.held) };
  }

  it('takes holds only while balance minus holds covers them, also when they arrive at once', async () => {
    const id = await user(7_500);
    const taken = await Promise.all(Array.from({ length: 20 }, () => store.hold(row(id, 'hold', 0, 1_000), 1_000)));
    expect(taken.filter(Boolean)).toHaveLength(7);
    expect(await ledger(id)).toEqual({ balanceMicros: 7_500, heldMicros: 7_000, rowsBalance: 7_500, rowsHeld: 7_000 });
  });

  it('takes a hold sized from a read only while the available balance is what was read', async () => {
    const id = await user(5_000);
    expect(await store.holdIfAvailable(row(id, 'hold', 0, 3_000), 4_000)).toBe(false);
    expect(await store.holdIfAvailable(row(id, 'hold', 0, 3_000), 5_000)).toBe(true);
    expect(await ledger(id)).toMatchObject({ heldMicros: 3_000, rowsHeld: 3_000 });
  });

  it('takes a hold of nothing (a free call) while the balance is not used up, with its row', async () => {
    const id = await user(1);
    expect(await store.hold(row(id, 'hold', 0, 0), 1)).toBe(true);
    expect(await store.hold(row(randomUUID(), 'hold', 0, 0), 1)).toBe(false);
    const [rows] = (await dataSource.query('SELECT COUNT(*) AS count FROM gateway_transactions WHERE user_id = ?', [
      id,
    ])) as Array<{ count: number | string }>;
    expect(Number(rows.count)).toBe(2);
  });

  it("changes nothing when a hold's row cannot be written, and the next hold on that connection stands alone", async () => {
    const id = await user(10_000);
    // One connection: the failed batch and the next one run on the same connection.
    const counting = engine.name === 'mysql' ? countingPool(dataSource, 1) : null;
    const single = counting ? ledgerStoreFor(dataSource, { mysqlPool: counting.pool }) : store;
    try {
      const first = row(id, 'hold', 0, 1_000);
      expect(await single.hold(first, 1_000)).toBe(true);
      // Read the message, not the class: better-sqlite3's error class belongs to the first test file that loaded
      // the native module, so in a later file it is no `Error` of this realm and `toThrow` would not see it.
      const failure = await single.hold({ ...row(id, 'hold', 0, 2_000), id: first.id }, 2_000).then(
        () => null,
        (error: unknown) => error as { message?: string },
      );
      expect(failure?.message).toMatch(/duplicate|unique/i);
      expect(await ledger(id)).toEqual({
        balanceMicros: 10_000,
        heldMicros: 1_000,
        rowsBalance: 10_000,
        rowsHeld: 1_000,
      });
      expect(await single.hold(row(id, 'hold', 0, 4_000), 4_000)).toBe(true);
      expect(await ledger(id)).toEqual({
        balanceMicros: 10_000,
        heldMicros: 5_000,
        rowsBalance: 10_000,
        rowsHeld: 5_000,
      });
    } finally {
      if (single !== store) await single.close();
    }
  });

  it('refuses a top-up past the maximum balance and writes nothing', async () => {
    const id = await user(1_000);
    expect(await store.topUp(row(id, 'topup', 2_000, 0), 2_500)).toBe(false);
    expect(await store.topUp(row(id, 'topup', 1_500, 0), 2_500)).toBe(true);
    expect(await ledger(id)).toEqual({ balanceMicros: 2_500, heldMicros: 0, rowsBalance: 2_500, rowsHeld: 0 });
  });

  it('sets the settled balance with an adjustment row of the difference, keeping open holds', async () => {
    const id = await user(10_000);
    await store.hold(row(id, 'hold', 0, 4_000), 4_000);
    expect(await store.set(id, 50_000, (delta) => row(id, 'adjustment', delta, 0))).toBe(40_000);
    expect(await store.set(randomUUID(), 1, (delta) => row(id, 'adjustment', delta, 0))).toBeNull();
    expect(await ledger(id)).toEqual({
      balanceMicros: 50_000,
      heldMicros: 4_000,
      rowsBalance: 50_000,
      rowsHeld: 4_000,
    });
  });

  it('settles a batch: each user charged and released in one change, rows and usage written', async () => {
    const [first, second] = [await user(10_000), await user(10_000)];
    for (const id of [first, second, first]) await store.hold(row(id, 'hold', 0, 2_000), 2_000);
    const usage = (userId: string, billed: boolean) => ({
      id: randomUUID(),
      userId,
      keyId: null,
      endpoint: 'chat.completions',
      model: 'llama3.2',
      promptTokens: 3,
      completionTokens: 4,
      costMicros: billed ? 1_100 : 0,
      latencyMs: 5,
      status: billed ? 200 : 502,
      billed,
      createdAt: new Date(),
    });
    const usages = [usage(first, true), usage(first, false), usage(second, true)];
    await store.settle({
      users: [
        { userId: first, amountMicros: -1_100, heldMicros: -4_000 },
        { userId: second, amountMicros: -1_100, heldMicros: -2_000 },
      ].sort((a, b) => (a.userId < b.userId ? -1 : 1)),
      rows: [
        { ...row(first, 'charge', -1_100, -2_000), usageId: usages[0].id },
        { ...row(first, 'release', 0, -2_000), usageId: usages[1].id },
        { ...row(second, 'charge', -1_100, -2_000), usageId: usages[2].id },
      ],
      usage: usages,
    });
    for (const id of [first, second]) {
      expect(await ledger(id)).toEqual({ balanceMicros: 8_900, heldMicros: 0, rowsBalance: 8_900, rowsHeld: 0 });
    }
    const written = (await dataSource.query(
      'SELECT status, billed, cost_micros FROM gateway_usage WHERE user_id = ? ORDER BY status',
      [first],
    )) as Array<{ status: number; billed: number | boolean; cost_micros: number | string }>;
    expect(written.map((entry) => [entry.status, Boolean(entry.billed), Number(entry.cost_micros)])).toEqual([
      [200, true, 1_100],
      [502, false, 0],
    ]);
  });

  it('settles and then holds in one transaction: the hold reads the settled balance, the settlement stays when it is refused', async () => {
    const id = await user(10_000);
    expect(await store.hold(row(id, 'hold', 0, 6_000), 6_000)).toBe(true);
    const settlement = (cost: number) => {
      const usageId = randomUUID();
      return {
        users: [{ userId: id, amountMicros: -cost, heldMicros: -6_000 }],
        rows: [{ ...row(id, 'charge', -cost, -6_000), usageId }],
        usage: [
          {
            id: usageId,
            userId: id,
            keyId: null,
            endpoint: 'chat.completions',
            model: 'llama3.2',
            promptTokens: 3,
            completionTokens: 4,
            costMicros: cost,
            latencyMs: 5,
            status: 200,
            billed: true,
            createdAt: new Date(),
          },
        ],
      };
    };
    // 4,000 available before the settlement, 9,000 after it: the hold of 6,000 fits only the settled balance.
    expect(await store.settleThenHold(settlement(1_000), row(id, 'hold', 0, 6_000), 6_000)).toBe(true);
    expect(await ledger(id)).toEqual({ balanceMicros: 9_000, heldMicros: 6_000, rowsBalance: 9_000, rowsHeld: 6_000 });
    // Refused (8,000 available after this settlement): the settlement is written all the same, the hold's row not.
    expect(await store.settleThenHold(settlement(1_000), row(id, 'hold', 0, 8_001), 8_001)).toBe(false);
    expect(await ledger(id)).toEqual({ balanceMicros: 8_000, heldMicros: 0, rowsBalance: 8_000, rowsHeld: 0 });
    const [usage] = (await dataSource.query('SELECT COUNT(*) AS count FROM gateway_usage WHERE user_id = ?', [
      id,
    ])) as Array<{ count: number | string }>;
    expect(Number(usage.count)).toBe(2);
  });

  it('writes nothing of a settlement and its hold when either fails', async () => {
    const id = await user(10_000);
    const first = row(id, 'hold', 0, 2_000);
    expect(await store.hold(first, 2_000)).toBe(true);
    const batch = {
      users: [{ userId: id, amountMicros: -500, heldMicros: -2_000 }],
      rows: [row(id, 'charge', -500, -2_000)],
      usage: [],
    };
    // The hold's row reuses an id: its INSERT fails after the settlement's statements ran.
    const failure = await store.settleThenHold(batch, { ...row(id, 'hold', 0, 1_000), id: first.id }, 1_000).then(
      () => null,
      (error: unknown) => error as { message?: string },
    );
    expect(failure?.message).toMatch(/duplicate|unique/i);
    expect(await ledger(id)).toEqual({
      balanceMicros: 10_000,
      heldMicros: 2_000,
      rowsBalance: 10_000,
      rowsHeld: 2_000,
    });
    expect(await store.settleThenHold(batch, row(id, 'hold', 0, 1_000), 1_000)).toBe(true);
    expect(await ledger(id)).toEqual({ balanceMicros: 9_500, heldMicros: 1_000, rowsBalance: 9_500, rowsHeld: 1_000 });
  });
});

describe('ledgerPoolOptions', () => {
  it('connects the ledger pool like the data source, with multiple statements on this pool only', () => {
    const options = createDataSourceOptions({ type: 'mysql', location: 'mysql://u:p@db.example:3307/toolbox' });
    expect(ledgerPoolOptions(options)).toMatchObject({
      uri: 'mysql://u:p@db.example:3307/toolbox',
      timezone: 'Z',
      charset: 'utf8mb4_unicode_ci',
      supportBigNumbers: true,
      bigNumberStrings: false,
      stringifyObjects: true,
      multipleStatements: true,
      connectionLimit: 8,
    });
    expect(options).not.toHaveProperty('multipleStatements');
  });

  it('refuses a SQLite data source', () => {
    expect(() => ledgerPoolOptions(createDataSourceOptions({ type: 'sqlite', location: ':memory:' }))).toThrow(/MySQL/);
  });
});

const mysqlUrl = process.env.TEST_MYSQL_URL;
(mysqlUrl ? describe : describe.skip)('ledger store round trips (mysql)', () => {
  const engine = mysqlEngine(mysqlUrl ?? 'mysql://127.0.0.1/unused');
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await engine.open();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await engine.dispose();
  });

  it('takes a hold, refuses one, tops up and settles then holds in one round trip each, all on the ledger pool', async () => {
    const { pool, sent } = countingPool(dataSource, 2);
    const store = ledgerStoreFor(dataSource, { mysqlPool: pool });
    try {
      const id = randomUUID();
      await dataSource.query(
        'INSERT INTO gateway_users (id, email, tier, balance_micros, held_micros, active, created_at) VALUES (?, ?, ?, 0, 0, 1, ?)',
        [id, `${id}@example.com`, 'payg', new Date()],
      );
      const query = jest.spyOn(dataSource, 'query');
      const runner = jest.spyOn(dataSource, 'createQueryRunner');
      try {
        expect(await store.topUp(row(id, 'topup', 3_000, 0), 10 ** 15)).toBe(true);
        expect(await store.hold(row(id, 'hold', 0, 2_000), 2_000)).toBe(true);
        expect(await store.hold(row(id, 'hold', 0, 2_000), 2_000)).toBe(false);
        expect(await store.holdIfAvailable(row(id, 'hold', 0, 500), 1_000)).toBe(true);
        // A queued settlement folded into the next hold: still one round trip.
        const settled = {
          users: [{ userId: id, amountMicros: -100, heldMicros: -500 }],
          rows: [row(id, 'charge', -100, -500)],
          usage: [],
        };
        expect(await store.settleThenHold(settled, row(id, 'hold', 0, 400), 400)).toBe(true);
        expect(query).not.toHaveBeenCalled();
        expect(runner).not.toHaveBeenCalled();
      } finally {
        query.mockRestore();
        runner.mockRestore();
      }
      expect(sent).toHaveLength(5);
      for (const text of sent) expect(text).toMatch(/^START TRANSACTION; UPDATE gateway_users .*; COMMIT$/);
      expect(await store.funds(id)).toEqual({ balanceMicros: 2_900, heldMicros: 2_400 });
    } finally {
      await store.close();
    }
  });
});

/** A second, plain better-sqlite3 connection: another process's view of the same file. */
const SqliteConnection = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string,
  options: { timeout: number },
) => { prepare(sql: string): { run(...parameters: unknown[]): unknown }; close(): void };

describe('ledger store (SQLite shared by two processes)', () => {
  it('sets a balance although another connection writes the file while the set reads it', async () => {
    const engine = sqliteEngine();
    const dataSource = await engine.open();
    const store = ledgerStoreFor(dataSource);
    const other = new SqliteConnection(dataSource.options.database as string, { timeout: 0 });
    try {
      const [first, second] = [randomUUID(), randomUUID()];
      for (const id of [first, second])
        await dataSource.query(
          'INSERT INTO gateway_users (id, email, tier, balance_micros, held_micros, active, created_at) VALUES (?, ?, ?, 0, 0, 1, ?)',
          [id, `${id}@example.com`, 'payg', engine.now()],
        );
      let otherWrite: unknown = null;
      const delta = await store.set(first, 4_000, (change) => {
        // Between the set's read and its write, another gateway process tops up another user.
        try {
          other.prepare('UPDATE gateway_users SET balance_micros = balance_micros + 1 WHERE id = ?').run(second);
        } catch (error) {
          otherWrite = error;
        }
        return row(first, 'adjustment', change, 0);
      });
      expect(delta).toBe(4_000);
      // The set held the write lock from its start: the other writer waited (here: gave up at once) instead.
      expect((otherWrite as { code?: string } | null)?.code).toBe('SQLITE_BUSY');
      expect(await store.funds(first)).toEqual({ balanceMicros: 4_000, heldMicros: 0 });
    } finally {
      other.close();
      await store.close();
      await dataSource.destroy();
      await engine.dispose();
    }
  });
});

describe('migration 1763800001920 (gateway ledger) on SQLite', () => {
  const engine = sqliteEngine();
  afterAll(() => engine.dispose());

  it('marks the usage rows of failed calls unbilled and keeps answered and cut calls billed', async () => {
    const before = await engine.open(MIGRATIONS.filter((migration) => migration !== GatewayLedger1763800001920));
    for (const status of [200, 499, 502]) {
      await before.query(
        `INSERT INTO gateway_usage (id, user_id, key_id, endpoint, model, prompt_tokens, completion_tokens, cost_micros,
          latency_ms, status, created_at) VALUES (?, NULL, NULL, 'chat.completions', 'm', 1, 1, 0, 1, ?, ?)`,
        [randomUUID(), status, engine.now()],
      );
    }
    await before.destroy();
    const after = await engine.open();
    try {
      const rows = (await after.query('SELECT status, billed FROM gateway_usage ORDER BY status')) as Array<{
        status: number;
        billed: number;
      }>;
      expect(rows.map((entry) => [entry.status, Boolean(entry.billed)])).toEqual([
        [200, true],
        [499, true],
        [502, false],
      ]);
      const users = (await after.query('PRAGMA table_info(gateway_users)')) as Array<{ name: string }>;
      expect(users.map((column) => column.name)).toContain('held_micros');
    } finally {
      await after.destroy();
    }
  });
});
