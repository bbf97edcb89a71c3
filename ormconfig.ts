import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config.js';
import { createDataSourceOptions } from './src/database/data-source-options.js';

/**
 * The TypeORM CLI data source (`npx typeorm migration:show -d dist/ormconfig.js`), built from the same
 * configuration as the services. The JWT secret is not needed to reach the database.
 */
const config = loadConfig(process.env);
export default new DataSource(createDataSourceOptions(config.database));
