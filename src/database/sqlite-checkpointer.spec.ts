import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from './data-source-options.js';
import { SqliteCheckpointService } from './sqlite-checkpoint.service.js';
import {
  BACKGROUND_CHECKPOINT_BYTES,
  FOREGROUND_CHECKPOINT_PAGES,
  SQLITE_DEFAULT_CHECKPOINT_PAGES,
  SqliteCheckpointer,
} from './sqlite-checkpointer.js';

interface Connection {
  pragma(sql: string, options?: { simple: boolean }): unknown;
  exec(sql: string): void;
  prepare(sql: string): { run(...values: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => Connection;

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SqliteCheckpointer', () => {
  const directory = mkdtempSync(join(tmpdir(), 'tb-checkpoint-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  function writer(name: string): { file: string; connection: Connection } {
    const file = join(directory, name);
    const connection = new Database(file);
    connection.pragma('journal_mode = WAL');
    connection.pragma('wal_autocheckpoint = 0');
    connection.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, payload TEXT)');
    const insert = connection.prepare('INSERT INTO rows (payload) VALUES (?)');
    for (let index = 0; index < 500; index++) insert.run('x'.repeat(1000));
    return { file, connection };
  }

  it('copies the WAL into the database file from its own thread once the WAL is past the size', async () => {
    const { file, connection } = writer('past.sqlite');
    const checkpointer = new SqliteCheckpointer(file, { intervalMs: 10, walBytes: 64 * 1024 });
    try {
      await until(() => checkpointer.checkpoints > 0);
      expect(checkpointer.checkpointedFrames).toBeGreaterThan(100);
      // Nothing is left for the serving connection to copy.
      const [left] = connection.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
      expect(left.checkpointed).toBe(left.log);
    } finally {
      await checkpointer.stop();
      connection.close();
    }
  });

  it('does nothing while the WAL is smaller', async () => {
    const { file, connection } = writer('small.sqlite');
    const checkpointer = new SqliteCheckpointer(file, { intervalMs: 10, walBytes: 1024 * 1024 * 1024 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(checkpointer.checkpoints).toBe(0);
    } finally {
      await checkpointer.stop();
      connection.close();
    }
  });

  it('reports nothing once stopped, not even the checkpoint its stop cut short', async () => {
    const { file, connection } = writer('stopped.sqlite');
    const errors: string[] = [];
    // The first checkpoint starts the thread (tens of milliseconds): stop() lands while it is under way.
    const checkpointer = new SqliteCheckpointer(file, { intervalMs: 1, walBytes: 1, onError: (m) => errors.push(m) });
    try {
      await until(() => checkpointer.running);
      await checkpointer.stop();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(errors).toEqual([]);
    } finally {
      connection.close();
    }
  });

  it('gives the checkpoints back to the serving connection when the thread cannot open the file', async () => {
    // A WAL past the size beside a database file that is not there: the thread fails to open it.
    const file = join(directory, 'missing.sqlite');
    writeFileSync(`${file}-wal`, '');
    truncateSync(`${file}-wal`, BACKGROUND_CHECKPOINT_BYTES);
    const pragmas: string[] = [];
    const dataSource = {
      options: { type: 'better-sqlite3', database: file },
      isInitialized: true,
      driver: { databaseConnection: { pragma: (sql: string) => pragmas.push(sql) } },
    } as unknown as DataSource;
    const service = new SqliteCheckpointService(dataSource);
    service.onApplicationBootstrap();
    try {
      expect(pragmas).toEqual([`wal_autocheckpoint = ${FOREGROUND_CHECKPOINT_PAGES}`]);
      await until(() => pragmas.length === 2);
      expect(pragmas[1]).toBe(`wal_autocheckpoint = ${SQLITE_DEFAULT_CHECKPOINT_PAGES}`);
      expect(service.current).toBeNull();
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it('leaves a connection the app has already closed alone when the thread fails', async () => {
    const file = join(directory, 'closed.sqlite');
    writeFileSync(`${file}-wal`, '');
    truncateSync(`${file}-wal`, BACKGROUND_CHECKPOINT_BYTES);
    const pragmas: string[] = [];
    const connection = {
      open: true,
      pragma(sql: string) {
        if (!this.open) throw new TypeError('The database connection is not open');
        pragmas.push(sql);
      },
    };
    const dataSource = {
      options: { type: 'better-sqlite3', database: file },
      isInitialized: true,
      driver: { databaseConnection: connection },
    } as unknown as DataSource;
    const service = new SqliteCheckpointService(dataSource);
    service.onApplicationBootstrap();
    connection.open = false; // the data source was destroyed before this service's shutdown hook ran
    try {
      await until(() => service.current === null);
      expect(pragmas).toEqual([`wal_autocheckpoint = ${FOREGROUND_CHECKPOINT_PAGES}`]);
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it("raises the serving connection's own checkpoint threshold on a SQLite file", async () => {
    const options = createDataSourceOptions({ type: 'sqlite', location: join(directory, 'app.sqlite') });
    const dataSource = new DataSource({ ...options, entities: [], migrations: [] });
    await dataSource.initialize();
    const service = new SqliteCheckpointService(dataSource);
    try {
      service.onApplicationBootstrap();
      const [{ wal_autocheckpoint: pages }] = (await dataSource.query('PRAGMA wal_autocheckpoint')) as Array<{
        wal_autocheckpoint: number;
      }>;
      expect(Number(pages)).toBe(FOREGROUND_CHECKPOINT_PAGES);
      expect(service.current).toBeInstanceOf(SqliteCheckpointer);
    } finally {
      await service.onApplicationShutdown();
      await dataSource.destroy();
    }
  });
});
