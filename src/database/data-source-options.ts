import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { DEFAULT_SQLITE_MMAP_MIB, type DatabaseConfig } from '../config/config.js';
import { ENTITIES } from './entities.js';
import { searchFulltextMigration, SearchFulltext1763800001500 } from './migrations/1763800001500-search-fulltext.js';
import { MIGRATIONS } from './migrations/index.js';

/** One description of the database for the services, `tb db migrate` and the TypeORM CLI (ormconfig.ts). */
export function createDataSourceOptions(database: DatabaseConfig, { logging = false } = {}): DataSourceOptions {
  const common = {
    entities: ENTITIES,
    migrations: MIGRATIONS.map((migration) =>
      migration === SearchFulltext1763800001500
        ? searchFulltextMigration(database.searchMysqlEngine ?? 'auto')
        : migration,
    ),
    synchronize: false,
    logging,
    migrationsTransactionMode: 'each' as const,
  };
  if (database.type === 'mysql') {
    return {
      ...common,
      type: 'mysql',
      url: database.location,
      timezone: 'Z',
      charset: 'utf8mb4_unicode_ci',
      supportBigNumbers: true,
      bigNumberStrings: false,
      extra: { connectionLimit: 20 },
    };
  }
  if (database.location !== ':memory:') mkdirSync(dirname(database.location), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: database.location,
    // WAL lets readers proceed during a write; busy_timeout rides out a concurrent writer. The memory map
    // lets reads use the OS cache's pages in place (search reads thousands of rows; docs/search.md).
    prepareDatabase: (db: { pragma(statement: string): unknown }) => {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      db.pragma(`mmap_size = ${(database.sqliteMmapMiB ?? DEFAULT_SQLITE_MMAP_MIB) * 1024 * 1024}`);
    },
  };
}
