import type { QueryRunner, TableColumnOptions } from 'typeorm';
import { SqlDialect } from './sql-dialect.js';

/**
 * Column builders for migrations written once with TypeORM's schema API, so the same migration runs on
 * SQLite and MySQL/MariaDB. Only the few types whose names differ between the engines are mapped here.
 */
export class PortableColumns {
  private readonly dialect: SqlDialect;

  constructor(queryRunner: QueryRunner) {
    this.dialect = SqlDialect.of(queryRunner.connection);
  }

  /** Column options for text compared and ordered by code point on both engines. */
  binary(): Partial<TableColumnOptions> {
    return this.dialect.binaryColumn();
  }

  id(name = 'id'): TableColumnOptions {
    return { name, type: 'varchar', length: '36', isPrimary: true };
  }

  string(name: string, length: number, options: Partial<TableColumnOptions> = {}): TableColumnOptions {
    return { name, type: 'varchar', length: String(length), isNullable: false, ...options };
  }

  nullableString(name: string, length: number): TableColumnOptions {
    return this.string(name, length, { isNullable: true });
  }

  /** Unbounded text (LONGTEXT on MySQL, see SqlDialect). */
  text(name: string, options: Partial<TableColumnOptions> = {}): TableColumnOptions {
    return { name, type: this.dialect.longTextType(), isNullable: true, ...options };
  }

  integer(name: string, options: Partial<TableColumnOptions> = {}): TableColumnOptions {
    return { name, type: this.dialect.integerType(), isNullable: false, default: 0, ...options };
  }

  bigint(name: string, options: Partial<TableColumnOptions> = {}): TableColumnOptions {
    return { name, type: 'bigint', isNullable: false, default: 0, ...options };
  }

  boolean(name: string, defaultValue = false): TableColumnOptions {
    return { name, type: 'boolean', isNullable: false, default: defaultValue ? 1 : 0 };
  }

  /** UTC timestamps with millisecond precision on MySQL (SQLite keeps the full text). */
  timestamp(name: string, options: Partial<TableColumnOptions> = {}): TableColumnOptions {
    return { name, type: 'datetime', precision: this.dialect.timestampPrecision(), isNullable: false, ...options };
  }

  nullableTimestamp(name: string): TableColumnOptions {
    return this.timestamp(name, { isNullable: true });
  }
}
