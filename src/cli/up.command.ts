import { loadConfig } from '../config/config.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';
import { ensurePersistedSecret } from './platform-secret.js';
import { portFlag, serveRegistry } from './registry.command.js';
import { parseWorkersFlag } from '../cluster/run-clustered.js';

/**
 * `tb up` (`npm start`): the platform on its embedded defaults — SQLite, local object storage, the
 * in-process queue — with a generated secret kept in the data directory when none is configured.
 */
export async function runUpCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { port: { type: 'string' }, 'data-dir': { type: 'string' }, workers: { type: 'string' } },
    { allowPositionals: false },
  );
  const shared = loadConfig(io.env, { dataDir: values['data-dir'] });
  const jwtSecret = shared.jwtSecret ?? (await ensurePersistedSecret(shared.dataDir));
  const config = loadConfig(io.env, {
    services: ['registry'],
    dataDir: values['data-dir'],
    port: portFlag(values.port),
    workers: parseWorkersFlag(values.workers),
    jwtSecret,
  });
  await serveRegistry(config, (url) =>
    io.out(`Toolbox Platform is up.
  Registry   ${url}/api/v1   (Swagger UI ${url}/api/docs)
  Data       ${config.dataDir} (${config.database.type}, objects in ${config.storage.primary})
  Get a token: npx tb token --user 1 --username you --data-dir ${config.dataDir}`),
  );
  return -1;
}
