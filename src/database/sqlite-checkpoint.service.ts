import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  FOREGROUND_CHECKPOINT_PAGES,
  SQLITE_DEFAULT_CHECKPOINT_PAGES,
  SqliteCheckpointer,
} from './sqlite-checkpointer.js';

/**
 * On a SQLite file, WAL checkpoints (and their fsync) leave the event loop for a thread of their own
 * ({@link SqliteCheckpointer}); on MySQL or an in-memory database this does nothing.
 */
@Injectable()
export class SqliteCheckpointService implements OnApplicationBootstrap, OnApplicationShutdown {
  private checkpointer: SqliteCheckpointer | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    const options = this.dataSource.options;
    if (options.type !== 'better-sqlite3' || options.database === ':memory:' || !this.dataSource.isInitialized) return;
    const connection = (
      this.dataSource.driver as unknown as { databaseConnection: { open?: boolean; pragma(sql: string): unknown } }
    ).databaseConnection;
    connection.pragma(`wal_autocheckpoint = ${FOREGROUND_CHECKPOINT_PAGES}`);
    const checkpointer = new SqliteCheckpointer(options.database, {
      // Once, then as without the thread: the connection checkpoints by itself again at SQLite's default.
      onError: (message) => {
        if (this.checkpointer !== checkpointer) return;
        this.checkpointer = null;
        void checkpointer.stop();
        // The app may be shutting down, its connection already closed: then nothing is left to give back.
        if (connection.open === false) return;
        connection.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_CHECKPOINT_PAGES}`);
        new Logger('SqliteCheckpoint').warn(
          `background checkpoints failed (${message}); the connection checkpoints by itself again`,
        );
      },
    });
    this.checkpointer = checkpointer;
  }

  /** The checkpointer of this app's database, when it has one (tests). */
  get current(): SqliteCheckpointer | null {
    return this.checkpointer;
  }

  async onApplicationShutdown(): Promise<void> {
    const checkpointer = this.checkpointer;
    this.checkpointer = null;
    await checkpointer?.stop();
  }
}
