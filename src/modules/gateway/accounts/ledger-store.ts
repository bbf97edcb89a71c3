import type { DataSource, QueryRunner } from 'typeorm';
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
 * connection); MySQL as one transaction on a pooled connection.
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

export function ledgerStoreFor(dataSource: DataSource): LedgerStore {
  return dataSource.options.type === 'mysql' ? new MysqlLedgerStore(dataSource) : new SqliteLedgerStore(dataSource);
}

interface SqliteStatement {
  run(...parameters: unknown[]): { changes: number };
  get(...parameters: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  transaction<T>(work: () => T): () => T;
}

/** TypeORM's own format for SQLite datetimes (UTC, no zone), so its readers parse these rows unchanged. */
function sqliteDate(value: Date): string {
  return value.toISOString().replace('T', ' ').replace('Z', '');
}

class SqliteLedgerStore implements LedgerStore {
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(private readonly dataSource: DataSource) {}

  private get database(): SqliteDatabase {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  }

  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private insertLedger(rows: LedgerRow[]): void {
    if (rows.length === 0) return;
    this.statement(`INSERT INTO gateway_transactions ${LEDGER_COLUMNS} VALUES ${placeholders(rows.length, 8)}`).run(
      ...rows.flatMap((row) => ledgerValues(row, sqliteDate)),
    );
  }

  private conditional(sql: string, parameters: unknown[], row: LedgerRow): boolean {
    return this.database.transaction(() => {
      if (this.statement(sql).run(...parameters).changes !== 1) return false;
      this.insertLedger([row]);
      return true;
    })();
  }

  hold(row: LedgerRow, atLeast: number): Promise<boolean> {
    return Promise.resolve(this.conditional(HOLD, [row.heldMicros, row.userId, atLeast], row));
  }

  holdIfAvailable(row: LedgerRow, available: number): Promise<boolean> {
    return Promise.resolve(this.conditional(HOLD_IF_AVAILABLE, [row.heldMicros, row.userId, available], row));
  }

  funds(userId: string): Promise<Funds | null> {
    const found = this.statement(FUNDS).get(userId) as { balance: number; held: number } | undefined;
    return Promise.resolve(found ? { balanceMicros: Number(found.balance), heldMicros: Number(found.held) } : null);
  }

  topUp(row: LedgerRow, maxBalance: number): Promise<boolean> {
    return Promise.resolve(this.conditional(TOP_UP, [row.amountMicros, row.userId, row.amountMicros, maxBalance], row));
  }

  set(userId: string, target: number, makeRow: (delta: number) => LedgerRow): Promise<number | null> {
    return Promise.resolve(
      this.database.transaction(() => {
        const found = this.statement(FUNDS).get(userId) as { balance: number } | undefined;
        if (!found) return null;
        const current = Number(found.balance);
        this.statement(SET).run(target, userId, current);
        this.insertLedger([makeRow(target - current)]);
        return target - current;
      })(),
    );
  }

  settle(batch: SettlementBatch): Promise<void> {
    this.database.transaction(() => {
      for (const user of batch.users) this.statement(SETTLE).run(user.amountMicros, user.heldMicros, user.userId);
      // Statements of one size are reused: the batch is written in slices of at most this many rows.
      for (let start = 0; start < batch.rows.length; start += 50)
        this.insertLedger(batch.rows.slice(start, start + 50));
      for (let start = 0; start < batch.usage.length; start += 50) {
        const slice = batch.usage.slice(start, start + 50);
        this.statement(`INSERT INTO gateway_usage ${USAGE_COLUMNS} VALUES ${placeholders(slice.length, 12)}`).run(
          ...slice.flatMap((row) => usageValues(row, sqliteDate)),
        );
      }
    })();
    return Promise.resolve();
  }
}

class MysqlLedgerStore implements LedgerStore {
  constructor(private readonly dataSource: DataSource) {}

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

  private conditional(sql: string, parameters: unknown[], row: LedgerRow): Promise<boolean> {
    return this.transaction(async (runner) => {
      const changed = await runner.query(sql, parameters, true);
      if (changed.affected !== 1) return false;
      await this.insertLedger(runner, [row]);
      return true;
    });
  }

  hold(row: LedgerRow, atLeast: number): Promise<boolean> {
    return this.conditional(HOLD, [row.heldMicros, row.userId, atLeast], row);
  }

  holdIfAvailable(row: LedgerRow, available: number): Promise<boolean> {
    return this.conditional(HOLD_IF_AVAILABLE, [row.heldMicros, row.userId, available], row);
  }

  async funds(userId: string): Promise<Funds | null> {
    const [found] = (await this.dataSource.query(FUNDS, [userId])) as Array<{ balance: string; held: string }>;
    return found ? { balanceMicros: Number(found.balance), heldMicros: Number(found.held) } : null;
  }

  topUp(row: LedgerRow, maxBalance: number): Promise<boolean> {
    return this.conditional(TOP_UP, [row.amountMicros, row.userId, row.amountMicros, maxBalance], row);
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
