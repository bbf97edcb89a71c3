import { DataSource } from 'typeorm';
import { loadConfig, redactUrl } from '../config/config.js';
import { createDataSourceOptions } from '../database/data-source-options.js';
import { migrateDatabase } from '../database/migrate.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

/** `tb db migrate` applies pending migrations; `tb db status` lists them. */
export async function runDbCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { 'data-dir': { type: 'string' } });
  const action = positionals[0];
  if (action !== 'migrate' && action !== 'status') throw new UsageError('usage: tb db migrate|status');
  // Reaching the database is no service's work: no secret needed.
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const dataSource = new DataSource(createDataSourceOptions(config.database));
  await dataSource.initialize();
  try {
    const where = config.database.type === 'mysql' ? redactUrl(config.database.location) : config.database.location;
    if (action === 'status') {
      const pending = await dataSource.showMigrations();
      io.out(`${where}: ${pending ? 'migrations pending' : 'up to date'}`);
      return 0;
    }
    await dataSource.destroy();
    const applied = await migrateDatabase(config.database);
    io.out(applied.length ? applied.map((m) => `applied ${m.name}`).join('\n') : `${where}: no pending migrations`);
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
