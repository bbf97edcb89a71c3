import { NestFactory } from '@nestjs/core';
import { loadConfig, type LoadConfigOptions, type PlatformConfig } from '../config/config.js';
import { RegistryAccountsService } from '../modules/registry/index.js';
import { RegistryAppModule, registryHttpAppOptions } from '../apps/registry.app-module.js';
import { createHttpApp, listen } from '../apps/create-http-app.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';
import { parseWorkersFlag, runClustered } from '../cluster/run-clustered.js';
import { migrateDatabase } from '../database/migrate.js';
import { platformLoggerFor } from '../logging/platform-logger.js';

export async function startRegistry(config: PlatformConfig) {
  const app = await createHttpApp(RegistryAppModule.forRoot(config), registryHttpAppOptions(config));
  const url = await listen(app, config.registry, 'Registry');
  return { app, url };
}

/** Starts the registry in one process, or in `config.workers` processes sharing the port. */
export async function serveRegistry(config: PlatformConfig, announce: (url: string) => void): Promise<void> {
  await runClustered({
    workers: config.registry.workers,
    prepare: async () => {
      await migrateDatabase(config.database);
    },
    start: async () => (await startRegistry(config)).url,
    ready: announce,
    logger: platformLoggerFor(config.log, config.debug),
  });
}

/** `tb registry [--port N] [--data-dir DIR] [--workers N|auto]` and `tb registry admins grant|revoke USER_ID`. */
export async function runRegistryCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  if (argv[0] === 'admins') return runAdminsCommand(argv.slice(1), io);
  const { values } = parseCommandArgs(
    argv,
    { port: { type: 'string' }, 'data-dir': { type: 'string' }, workers: { type: 'string' } },
    { allowPositionals: false },
  );
  const options: LoadConfigOptions = {
    services: ['registry'],
    dataDir: values['data-dir'],
    port: portFlag(values.port),
    workers: parseWorkersFlag(values.workers),
  };
  const config = loadConfig(io.env, options);
  await serveRegistry(config, (url) =>
    io.out(
      `Registry ready at ${url}/api/v1  (docs: ${url}/api/docs; ${config.registry.workers} worker${config.registry.workers === 1 ? '' : 's'})`,
    ),
  );
  return -1;
}

async function runAdminsCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { 'data-dir': { type: 'string' } });
  const [action, userId] = positionals;
  if ((action !== 'grant' && action !== 'revoke') || !userId)
    throw new UsageError('usage: tb registry admins grant|revoke USER_ID');
  const config = loadConfig(io.env, { services: ['registry'], dataDir: values['data-dir'] });
  const app = await NestFactory.createApplicationContext(RegistryAppModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  try {
    const user = await app.get(RegistryAccountsService).setAdmin(userId, action === 'grant');
    io.out(`${action === 'grant' ? 'Granted' : 'Revoked'} admin for platform user ${user.platformUserId}`);
  } finally {
    await app.close();
  }
  return 0;
}
