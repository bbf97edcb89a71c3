import type { DataSourceOptions } from 'typeorm';

/** Anything that knows its driver: a DataSource, a queryRunner.connection, or bare options. */
export interface HasDriverType {
  options: Pick<DataSourceOptions, 'type'>;
}

/**
 * Where SQLite and MySQL/MariaDB spell the same thing differently. Every hand-written statement and
 * every migration that differs between the two engines asks here, so supporting a third engine (or
 * checking what differs) means reading one file. Covered on both engines by
 * test/e2e/database/sql-dialect.e2e-spec.ts.
 */
export class SqlDialect {
  /** MySQL or MariaDB (one wire protocol, one syntax for everything used here); otherwise SQLite. */
  readonly mysql: boolean;

  constructor(type: DataSourceOptions['type']) {
    this.mysql = type === 'mysql' || type === 'mariadb';
  }

  static of(source: HasDriverType): SqlDialect {
    return new SqlDialect(source.options.type);
  }

  /** An index hint that makes the planner read through `index`. */
  useIndex(index: string): string {
    return this.mysql ? `FORCE INDEX (${index})` : `INDEXED BY ${index}`;
  }

  /**
   * Reads through the primary key. MySQL may otherwise pick a secondary index and sort; SQLite has no
   * hint for a WITHOUT ROWID table's key and walks it by itself.
   */
  usePrimaryKey(): string {
    return this.mysql ? 'FORCE INDEX (PRIMARY)' : '';
  }

  /** Code point order and comparison (MySQL's default collation orders `_` and `-` differently and folds case). */
  binary(expression: string): string {
    return this.mysql ? `${expression} COLLATE utf8mb4_bin` : expression;
  }

  /** An INSERT that skips rows whose key already exists. */
  insertIgnore(): string {
    return this.mysql ? 'INSERT IGNORE' : 'INSERT OR IGNORE';
  }

  /**
   * Statements that bring the planner's statistics up to date, where the engine does not keep them by
   * itself: SQLite plans joins from statistics it only has after ANALYZE; `PRAGMA optimize` analyzes
   * only tables whose statistics are missing or stale, on a sample. InnoDB keeps its own.
   */
  refreshStatisticsStatements(): string[] {
    return this.mysql ? [] : ['PRAGMA analysis_limit = 1000', 'PRAGMA optimize = 0x10002'];
  }

  // Column options for migrations (PortableColumns and the search tables).

  /** A text column compared and ordered by code point. */
  binaryColumn(): { charset?: string; collation?: string } {
    return this.mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
  }

  /** Unbounded text: MySQL TEXT stops at 64 KiB, so long values use LONGTEXT there. */
  longTextType(): string {
    return this.mysql ? 'longtext' : 'text';
  }

  integerType(): string {
    return this.mysql ? 'int' : 'integer';
  }

  /** Millisecond timestamps on MySQL (SQLite keeps the full text). */
  timestampPrecision(): number | undefined {
    return this.mysql ? 3 : undefined;
  }
}
