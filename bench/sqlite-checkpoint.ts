/**
 * SQLite write latency with WAL checkpoints in the committing call (SQLite's default: the commit that takes the
 * WAL past 1,000 pages copies it into the database file and fsyncs it, on the event loop) against checkpoints in a
 * thread of their own (src/database/sqlite-checkpointer.ts, what the services do). Each transaction is a gateway
 * ledger hold's shape (a conditional UPDATE of a user row and a ledger row INSERT); the two modes alternate, a
 * fresh file each, and calls come 20 at a time with a 1 ms pause, so the thread gets its turns as in a server.
 *
 *   npm run build && node dist/bench/sqlite-checkpoint.js [--transactions N] [--rounds R]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FOREGROUND_CHECKPOINT_PAGES, SqliteCheckpointer } from '../src/database/sqlite-checkpointer.js';
import { ascending, percentile } from './support/stats.js';

interface Statement {
  run(...values: unknown[]): unknown;
}
interface Connection {
  pragma(sql: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction(work: () => void): () => void;
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => Connection;

const { values } = parseArgs({
  options: { transactions: { type: 'string', default: '40000' }, rounds: { type: 'string', default: '2' } },
});
const TRANSACTIONS = Number(values.transactions);

async function run(mode: 'in the commit' | 'own thread'): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'tb-checkpoint-bench-'));
  const file = join(directory, 'bench.sqlite');
  const database = new Database(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.exec(`CREATE TABLE users (id varchar(36) PRIMARY KEY NOT NULL, balance bigint, held bigint);
    CREATE TABLE rows (id varchar(36) PRIMARY KEY NOT NULL, user_id varchar(36), kind varchar(16), amount bigint,
      held bigint, usage_id varchar(36), note varchar(255), created_at datetime);
    CREATE INDEX ix_rows_user_time ON rows (user_id, created_at);`);
  let checkpointer: SqliteCheckpointer | null = null;
  if (mode === 'own thread') {
    database.pragma(`wal_autocheckpoint = ${FOREGROUND_CHECKPOINT_PAGES}`);
    checkpointer = new SqliteCheckpointer(file);
  }
  const user = randomUUID();
  database.prepare('INSERT INTO users VALUES (?, ?, 0)').run(user, 1e12);
  const hold = database.prepare('UPDATE users SET held = held + ? WHERE id = ? AND balance - held >= ?');
  const insert = database.prepare('INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const transaction = database.transaction(() => {
    hold.run(1, user, 1);
    insert.run(randomUUID(), user, 'hold', 0, 1, null, 'chat.completions llama3.2', new Date().toISOString());
  });
  const times: number[] = [];
  for (let index = 0; index < TRANSACTIONS; index++) {
    const started = process.hrtime.bigint();
    transaction();
    times.push(Number(process.hrtime.bigint() - started) / 1e3);
    if (index % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await checkpointer?.stop();
  database.close();
  rmSync(directory, { recursive: true, force: true });
  ascending(times);
  const at = (share: number) => percentile(times, share).toFixed(1);
  const mean = (times.reduce((sum, value) => sum + value, 0) / times.length).toFixed(1);
  return `| ${mode} | ${at(0.5)} | ${at(0.99)} | ${at(0.999)} | ${times[times.length - 1].toFixed(0)} | ${mean} |`;
}

console.log(`SQLite hold-shaped transactions, ${TRANSACTIONS} per run, WAL + synchronous=NORMAL, modes alternating`);
console.log('| Checkpoints | p50 µs | p99 µs | p99.9 µs | max µs | mean µs |');
console.log('|---|---|---|---|---|---|');
for (let round = 0; round < Number(values.rounds); round++) {
  console.log(await run('in the commit'));
  console.log(await run('own thread'));
}
