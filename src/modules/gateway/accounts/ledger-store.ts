import { createPool, type PoolOptions, type ResultSetHeader } from 'mysql2/promise';
import type { DataSource, DataSourceOptions, QueryRunner } from 'typeorm';
import type { GatewayTransactionKind } from '../entities/gateway-transaction.entity.js';

/** One ledger row as written: what it does to the balance (`amountMicros`) and to the open holds (`heldMicros`). */
export interface LedgerRow {
  id: string;
  userId: string;
  kind: GatewayTransactionKind;
  amountMicros: number;
  heldMicros: number;
  usageId: string | null;
  note: string | null;
  createdAt: Date;
}

/** A usage row as written by a settlement. */
export interface UsageRow {
  id: string;
  userId: string | null;
  keyId: string | null;
  endpoint: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  latencyMs: number;
  status: number;
  billed: boolean;
  createdAt: Date;
}

/** A user's settled balance and what calls in flight hold of it. */
export interface Funds {
  balanceMicros: number;
  heldMicros: number;
}

/**
 * Settlements written together: per user the change of balance and holds (the sum of their rows), then the
 * rows. Users are changed in id order, so two processes settling the same users lock them in the same order.
 */
export interface SettlementBatch {
  users: Array<{ userId: string; amountMicros: number; heldMicros: number }>;
  rows: LedgerRow[];
  usage: UsageRow[];
}

/**
 * Where a balance changes. Every method writes the change of `gateway_users` and its ledger row in one database
 * transaction, and the change is conditional (`WHERE` on the balance), so concurrent callers in any number of
 * gateway processes cannot spend the same money twice and `balance = Σ amount`, `held = Σ held` always hold.
 * SQLite runs each as one synchronous better-sqlite3 transaction (nothing else can interleave with it on the
 * connection). MySQL runs a hold or top-up as one multi-statement batch on the ledger's own small pool (one round
 * trip before a call's first byte), the rest as transactions on the data source's pool.
 */
export interface LedgerStore {
  /** Opens a hold of `row.heldMicros` when the available balance (balance − holds) is at least `atLeast`. */
  hold(row: LedgerRow, atLeast: number): Promise<boolean>;
  /** Opens a hold only when the available balance is exactly `available` (a hold sized from a read of it). */
  holdIfAvailable(row: LedgerRow, available: number): Promise<boolean>;
  funds(userId: string): Promise<Funds | null>;
  /** Adds `row.amountMicros` when the balance stays at most `maxBalance`. */
  topUp(row: LedgerRow, maxBalance: number): Promise<boolean>;
  /** Sets the balance to `target`, recording the difference as the row `makeRow(delta)`; returns the delta, or null (no user). */
  set(userId: string, target: number, makeRow: (delta: number) => LedgerRow): Promise<number | null>;
  settle(batch: SettlementBatch): Promise<void>;
  /**
   * Writes `batch` and then opens the hold `row` as {@link hold} does, in one transaction (one round trip on
   * MySQL): the settlement is written whether or not the hold is taken, and the hold's condition reads the balance
   * the settlement left. Nothing of either is written when it fails.
   */
  settleThenHold(batch: SettlementBatch, row: LedgerRow, atLeast: number): Promise<boolean>;
  /** Closes what the store opened itself (MySQL: its pool); call it after the last change, before the data source closes. */
  close(): Promise<void>;
}

const HOLD =
  'UPDATE gateway_users SET held_micros = held_micros + ? WHERE id = ? AND balance_micros - held_micros >= ?';
const HOLD_IF_AVAILABLE =
  'UPDATE gateway_users SET held_micros = held_micros + ? WHERE id = ? AND balance_micros - held_micros = ?';
const TOP_UP = 'UPDATE gateway_users SET balance_micros = balance_micros + ? WHERE id = ? AND balance_micros + ? <= ?';
const SET = 'UPDATE gateway_users SET balance_micros = ? WHERE id = ? AND balance_micros = ?';
const SETTLE =
  'UPDATE gateway_users SET balance_micros = balance_micros + ?, held_micros = held_micros + ? WHERE id = ?';
const FUNDS = 'SELECT balance_micros AS balance, held_micros AS held FROM gateway_users WHERE id = ?';
const LEDGER_COLUMNS = '(id, user_id, kind, amount_micros, held_micros, usage_id, note, created_at)';
const USAGE_COLUMNS =
  '(id, user_id, key_id, endpoint, model, prompt_tokens, completion_tokens, cost_micros, latency_ms, status, billed, created_at)';

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

function ledgerValues(row: LedgerRow, date: (value: Date) => unknown): unknown[] {
  return [row.id, row.userId, row.kind, row.amountMicros, row.heldMicros, row.usageId, row.note, date(row.createdAt)];
}

function usageValues(row: UsageRow, date: (value: Date) => unknown): unknown[] {
  return [
    row.id,
    row.userId,
    row.keyId,
    row.endpoint,
    row.model,
    row.promptTokens,
    row.completionTokens,
    row.costMicros,
    row.latencyMs,
    row.status,
    row.billed ? 1 : 0,
    date(row.createdAt),
  ];
}

/** `mysqlPool` replaces the ledger's own pool on MySQL (the store then closes it on `close`). */
export function ledgerStoreFor(dataSource: DataSource, { mysqlPool }: { mysqlPool?: LedgerPool } = {}): LedgerStore {
  return dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb'
    ? new MysqlLedgerStore(dataSource, mysqlPool)
    : new SqliteLedgerStore(dataSource);
}

interface SqliteStatement {
  run(...parameters: unknown[]): { changes: number };
  get(...parameters: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  transaction<A extends unknown[], T>(
    work: (...parameters: A) => T,
  ): ((...parameters: A) => T) & {
    immediate: (...parameters: A) => T;
  };
}

/** TypeORM's own format for SQLite datetimes (UTC, no zone), so its readers parse these rows unchanged. */
function sqliteDate(value: Date): string {
  return value.toISOString().replace('T', ' ').replace('Z', '');
}

/** The result of synchronous work as a promise, rejected (not thrown) when it fails, as the MySQL store's are. */
function promised<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** `INSERT … VALUES (…), (…)` for `rows` rows of `columns` columns, built once per size. */
function insertSql(table: string, columns: string, count: number): (rows: number) => string {
  const built: string[] = [];
  return (rows) => (built[rows] ??= `INSERT INTO ${table} ${columns} VALUES ${placeholders(rows, count)}`);
}
const insertLedgerSql = insertSql('gateway_transactions', LEDGER_COLUMNS, 8);
const insertUsageSql = insertSql('gateway_usage', USAGE_COLUMNS, 12);

/** The store's transactions, wrapped once per connection (better-sqlite3 builds five functions per wrap). */
interface SqliteTransactions {
  database: SqliteDatabase;
  conditional: (sql: string, parameters: unknown[], row: LedgerRow) => boolean;
  settle: (batch: SettlementBatch) => void;
  settleThenHold: (batch: SettlementBatch, atLeast: number, row: LedgerRow) => boolean;
}

class SqliteLedgerStore implements LedgerStore {
  private readonly statements = new Map<string, SqliteStatement>();
  private preparedOn: SqliteDatabase | null = null;
  private wrapped: SqliteTransactions | null = null;

  constructor(private readonly dataSource: DataSource) {}

  private get database(): SqliteDatabase {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  }

  private get transactions(): SqliteTransactions {
    const database = this.database;
    if (this.wrapped?.database !== database) {
      this.wrapped = {
        database,
        conditional: database.transaction((sql: string, parameters: unknown[], row: LedgerRow) => {
          if (this.statement(sql).run(...parameters).changes !== 1) return false;
          this.insertLedger([row]);
          return true;
        }),
        settle: database.transaction((batch: SettlementBatch) => {
          this.settleUsers(batch);
          this.insertSettlementRows(batch, null);
        }),
        settleThenHold: database.transaction((batch: SettlementBatch, atLeast: number, row: LedgerRow) => {
          this.settleUsers(batch);
          const held = this.statement(HOLD).run(row.heldMicros, row.userId, atLeast).changes === 1;
          this.insertSettlementRows(batch, held ? row : null);
          return held;
        }),
      };
    }
    return this.wrapped;
  }

  private statement(sql: string): SqliteStatement {
    const database = this.database;
    if (this.preparedOn !== database) {
      // Statements belong to a connection: a new one (the data source reopened) prepares its own.
      this.statements.clear();
      this.preparedOn = database;
    }
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private settleUsers(batch: SettlementBatch): void {
    for (const user of batch.users) this.statement(SETTLE).run(user.amountMicros, user.heldMicros, user.userId);
  }

  /** A settlement's rows, with the row of a hold `opened` in the same transaction (its UPDATE already run). */
  private insertSettlementRows(batch: SettlementBatch, opened: LedgerRow | null): void {
    const rows = opened ? [...batch.rows, opened] : batch.rows;
    // Statements of one size are reused: the batch is written in slices of at most this many rows.
    for (let start = 0; start < rows.length; start += 50) this.insertLedger(rows.slice(start, start + 50));
    for (let start = 0; start < batch.usage.length; start += 50) {
      const slice = batch.usage.slice(start, start + 50);
      this.statement(insertUsageSql(slice.length)).run(...slice.flatMap((row) => usageValues(row, sqliteDate)));
    }
  }

  private insertLedger(rows: LedgerRow[]): void {
    if (rows.length === 0) return;
    this.statement(insertLedgerSql(rows.length)).run(...rows.flatMap((row) => ledgerValues(row, sqliteDate)));
  }

  private conditional(sql: string, parameters: unknown[], row: LedgerRow): boolean {
    return this.transactions.conditional(sql, parameters, row);
  }

  hold(row: LedgerRow, atLeast: number): Promise<boolean> {
    return promised(() => this.conditional(HOLD, [row.heldMicros, row.userId, atLeast], row));
  }

  holdIfAvailable(row: LedgerRow, available: number): Promise<boolean> {
    return promised(() => this.conditional(HOLD_IF_AVAILABLE, [row.heldMicros, row.userId, available], row));
  }

  funds(userId: string): Promise<Funds | null> {
    return promised(() => {
      const found = this.statement(FUNDS).get(userId) as { balance: number; held: number } | undefined;
      return found ? { balanceMicros: Number(found.balance), heldMicros: Number(found.held) } : null;
    });
  }

  topUp(row: LedgerRow, maxBalance: number): Promise<boolean> {
    return promised(() => this.conditional(TOP_UP, [row.amountMicros, row.userId, row.amountMicros, maxBalance], row));
  }

  set(userId: string, target: number, makeRow: (delta: number) => LedgerRow): Promise<number | null> {
    // IMMEDIATE: the write lock is taken before the balance is read. A deferred transaction would read a snapshot
    // and then fail with SQLITE_BUSY at once (no busy wait can help) when another process wrote in between.
    return promised(
      this.database.transaction(() => {
        const found = this.statement(FUNDS).get(userId) as { balance: number } | undefined;
        if (!found) return null;
        const current = Number(found.balance);
        const row = makeRow(target - current);
        this.statement(SET).run(target, userId, current);
        this.insertLedger([row]);
        return target - current;
      }).immediate,
    );
  }

  settle(batch: SettlementBatch): Promise<void> {
    return promised(() => this.transactions.settle(batch));
  }

  settleThenHold(batch: SettlementBatch, row: LedgerRow, atLeast: number): Promise<boolean> {
    return promised(() => this.transactions.settleThenHold(batch, atLeast, row));
  }

  /** The connection is the data source's. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The part of a mysql2 connection pool the ledger uses (a seam for counting what is sent in tests). */
export interface LedgerPool {
  getConnection(): Promise<LedgerConnection>;
  end(): Promise<void>;
}
export interface LedgerConnection {
  query(sql: string, values: unknown[]): Promise<[unknown, unknown]>;
  release(): void;
  destroy(): void;
}

/**
 * Each connection of the ledger's pool is busy for one round trip per hold, so a few serve many calls in flight;
 * the rest of the gateway keeps the data source's pool.
 */
const LEDGER_POOL_CONNECTIONS = 8;

/**
 * The ledger pool's options: the data source's server, credentials and value handling (UTC datetimes, BIGINT as
 * numbers, objects bound as strings), plus `multipleStatements`, which only this pool has: it carries the
 * ledger's fixed statements, whose values are always bound as `?` parameters.
 */
export function ledgerPoolOptions(options: DataSourceOptions): PoolOptions {
  if (options.type !== 'mysql' && options.type !== 'mariadb') throw new Error('the ledger pool is for MySQL/MariaDB');
  const server = options.url
    ? { uri: options.url }
    : {
        host: options.host,
        port: options.port,
        user: options.username,
        password: typeof options.password === 'string' ? options.password : undefined,
        database: options.database,
        socketPath: options.socketPath,
      };
  return {
    ...server,
    charset: options.charset,
    timezone: options.timezone,
    supportBigNumbers: options.supportBigNumbers ?? true,
    bigNumberStrings: options.bigNumberStrings ?? true,
    dateStrings: options.dateStrings as PoolOptions['dateStrings'],
    ssl: options.ssl as PoolOptions['ssl'],
    connectTimeout: options.connectTimeout,
    stringifyObjects: true,
    multipleStatements: true,
    connectionLimit: LEDGER_POOL_CONNECTIONS,
  };
}

/**
 * A conditional change and its ledger row as one batch: one round trip, one transaction. The row is inserted only
 * when the UPDATE changed the user (`ROW_COUNT()` of the statement before it; mysql2 connects with FOUND_ROWS,
 * so a hold of 0 on a matching user counts as changed, as on SQLite).
 */
function conditionalBatch(update: string): string {
  return `START TRANSACTION; ${conditionalChange(update)}`;
}
/** The batch after its START TRANSACTION: the UPDATE, the conditional INSERT, COMMIT. */
function conditionalChange(update: string): string {
  return `${update}; INSERT INTO gateway_transactions ${LEDGER_COLUMNS} SELECT ${Array.from({ length: 8 }, () => '?').join(', ')} FROM DUAL WHERE ROW_COUNT() = 1; COMMIT`;
}
const HOLD_BATCH = conditionalBatch(HOLD);
const HOLD_CHANGE = conditionalChange(HOLD);
const HOLD_IF_AVAILABLE_BATCH = conditionalBatch(HOLD_IF_AVAILABLE);
const TOP_UP_BATCH = conditionalBatch(TOP_UP);

class MysqlLedgerStore implements LedgerStore {
  private ledgerPool: LedgerPool | null;

  constructor(
    private readonly dataSource: DataSource,
    pool: LedgerPool | undefined,
  ) {
    this.ledgerPool = pool ?? null;
  }

  /** Opened at the first hold or top-up, so a process that never takes one opens no connection. */
  private get pool(): LedgerPool {
    this.ledgerPool ??= createPool(ledgerPoolOptions(this.dataSource.options)) as unknown as LedgerPool;
    return this.ledgerPool;
  }

  async close(): Promise<void> {
    const pool = this.ledgerPool;
    this.ledgerPool = null;
    await pool?.end();
  }

  /** One transaction on one pooled connection; rolled back when `work` throws or returns false. */
  private async transaction<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      try {
        const result = await work(runner);
        if (result === false || result === null) await runner.rollbackTransaction();
        else await runner.commitTransaction();
        return result;
      } catch (error) {
        await runner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  private async insertLedger(runner: QueryRunner, rows: LedgerRow[]): Promise<void> {
    if (rows.length === 0) return;
    await runner.query(
      `INSERT INTO gateway_transactions ${LEDGER_COLUMNS} VALUES ${placeholders(rows.length, 8)}`,
      rows.flatMap((row) => ledgerValues(row, (date) => date)),
    );
  }

  /** Sends a conditional batch; true when its UPDATE changed the user (and so its row was written). */
  private conditional(batch: string, parameters: unknown[], row: LedgerRow): Promise<boolean> {
    // Results per statement: START TRANSACTION, UPDATE, INSERT, COMMIT.
    return this.sendBatch(batch, [...parameters, ...ledgerValues(row, (date) => date)], 1);
  }

  /** Sends a batch that ends in a conditional change; true when the UPDATE at `updateAt` changed the user. */
  private async sendBatch(batch: string, parameters: unknown[], updateAt: number): Promise<boolean> {
    const connection = await this.pool.getConnection();
    let results: ResultSetHeader[];
    try {
      [results] = (await connection.query(batch, parameters)) as [ResultSetHeader[], unknown];
    } catch (error) {
      // The server stops a batch at its first failing statement, so the transaction may still be open with the
      // UPDATE in it: roll it back before the connection serves anyone else (their START TRANSACTION would commit
      // it). A connection that cannot even do that is closed instead.
      await connection.query('ROLLBACK', []).then(
        () => connection.release(),
        () => connection.destroy(),
      );
      throw error;
    }
    connection.release();
    return results[updateAt].affectedRows === 1;
  }

  hold(row: LedgerRow, atLeast: number): Promise<boolean> {
    return this.conditional(HOLD_BATCH, [row.heldMicros, row.userId, atLeast], row);
  }

  holdIfAvailable(row: LedgerRow, available: number): Promise<boolean> {
    return this.conditional(HOLD_IF_AVAILABLE_BATCH, [row.heldMicros, row.userId, available], row);
  }

  async funds(userId: string): Promise<Funds | null> {
    const [found] = (await this.dataSource.query(FUNDS, [userId])) as Array<{ balance: string; held: string }>;
    return found ? { balanceMicros: Number(found.balance), heldMicros: Number(found.held) } : null;
  }

  topUp(row: LedgerRow, maxBalance: number): Promise<boolean> {
    return this.conditional(TOP_UP_BATCH, [row.amountMicros, row.userId, row.amountMicros, maxBalance], row);
  }

  set(userId: string, target: number, makeRow: (delta: number) => LedgerRow): Promise<number | null> {
    return this.transaction(async (runner) => {
      // The row lock keeps holds and settlements of this user out until the adjustment row is written.
      const [found] = (await runner.query(`${FUNDS} FOR UPDATE`, [userId])) as Array<{ balance: string }>;
      if (!found) return null;
      const current = Number(found.balance);
      await runner.query(SET, [target, userId, current]);
      await this.insertLedger(runner, [makeRow(target - current)]);
      return target - current;
    });
  }

  /**
   * One batch on the ledger's pool: START TRANSACTION, the settlement's UPDATEs and INSERTs, the hold's UPDATE and
   * conditional INSERT, COMMIT.
   */
  settleThenHold(batch: SettlementBatch, row: LedgerRow, atLeast: number): Promise<boolean> {
    const statements = ['START TRANSACTION'];
    const parameters: unknown[] = [];
    for (const user of batch.users) {
      statements.push(SETTLE);
      parameters.push(user.amountMicros, user.heldMicros, user.userId);
    }
    if (batch.rows.length > 0) {
      statements.push(
        `INSERT INTO gateway_transactions ${LEDGER_COLUMNS} VALUES ${placeholders(batch.rows.length, 8)}`,
      );
      for (const entry of batch.rows) parameters.push(...ledgerValues(entry, (date) => date));
    }
    if (batch.usage.length > 0) {
      statements.push(`INSERT INTO gateway_usage ${USAGE_COLUMNS} VALUES ${placeholders(batch.usage.length, 12)}`);
      for (const entry of batch.usage) parameters.push(...usageValues(entry, (date) => date));
    }
    const updateAt = statements.length;
    statements.push(HOLD_CHANGE);
    parameters.push(row.heldMicros, row.userId, atLeast, ...ledgerValues(row, (date) => date));
    return this.sendBatch(statements.join('; '), parameters, updateAt);
  }

  async settle(batch: SettlementBatch): Promise<void> {
    await this.transaction(async (runner) => {
      for (const user of batch.users) await runner.query(SETTLE, [user.amountMicros, user.heldMicros, user.userId]);
      await this.insertLedger(runner, batch.rows);
      if (batch.usage.length > 0) {
        await runner.query(
          `INSERT INTO gateway_usage ${USAGE_COLUMNS} VALUES ${placeholders(batch.usage.length, 12)}`,
          batch.usage.flatMap((row) => usageValues(row, (date) => date)),
        );
      }
      return true;
    });
  }
}
