import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config.js';
import { createDataSourceOptions } from './src/database/data-source-options.js';

/**
 * The TypeORM CLI's data source, built from the same configuration (`DATABASE_URL`, `DATA_DIR`) as the
 * services; the CLI runs it compiled (`npm run migration:show` builds first, then reads dist/ormconfig.js).
 * Reaching the database needs no JWT secret.
 */
const config = loadConfig(process.env, { jwtSecretOptional: true });
export default new DataSource(createDataSourceOptions(config.database));
