import { DataSource, type Migration } from 'typeorm';
import type { DatabaseConfig } from '../config/config.js';
import { createDataSourceOptions } from './data-source-options.js';

/** Applies pending migrations once (`tb db migrate`, and the primary of a clustered service). */
export async function migrateDatabase(database: DatabaseConfig): Promise<Migration[]> {
  const dataSource = new DataSource(createDataSourceOptions(database));
  await dataSource.initialize();
  try {
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
