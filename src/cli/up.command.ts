import { loadConfig } from '../config/config.js';
import { parseCommandArgs } from './cli-args.js';
import { ensurePersistedSecret } from './platform-secret.js';
import { startRegistry } from './registry.command.js';

/**
 * `tb up` (`npm start`): the platform on its embedded defaults — SQLite, local object storage, the
 * in-process queue — with a generated secret kept in the data directory when none is configured.
 */
export async function runUpCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(argv, { port: { type: 'string' }, 'data-dir': { type: 'string' } }, { allowPositionals: false });
  const probe = loadConfig({ ...process.env, PLATFORM_JWT_SECRET: 'x'.repeat(32) }, { dataDir: values['data-dir'] });
  const jwtSecret = process.env.PLATFORM_JWT_SECRET || (await ensurePersistedSecret(probe.dataDir));
  const config = loadConfig(process.env, { dataDir: values['data-dir'], port: values.port ? Number(values.port) : undefined, jwtSecret });
  const { url } = await startRegistry(config);
  console.log(`Toolbox Platform is up.
  Registry   ${url}/api/v1   (Swagger UI ${url}/api/docs)
  Data       ${config.dataDir} (${config.database.type}, objects in ${config.storage.primary})
  Get a token: npx tb token --user 1 --username you --data-dir ${config.dataDir}`);
  return -1;
}
