import { NestFactory } from '@nestjs/core';
import { loadConfig, type ConfigOverrides, type PlatformConfig } from '../config/config.js';
import { UsersService } from '../modules/registry/users.service.js';
import { RegistryServiceModule } from '../services/registry.service-module.js';
import { createHttpApp, listen } from '../services/create-http-app.js';
import { UsageError, parseCommandArgs } from './cli-args.js';

export async function startRegistry(config: PlatformConfig) {
  const app = await createHttpApp(RegistryServiceModule.forRoot(config), config, {
    title: 'Toolbox Platform — package and artifact registry',
    description: 'Packages, versions, publishers, artifacts, search, update checks, dependency resolution and deltas (API 1.1).',
  });
  const url = await listen(app, config, 'Registry');
  return { app, url };
}

/** `tb registry [--port N] [--data-dir DIR]` and `tb registry admins grant|revoke USER_ID`. */
export async function runRegistryCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'admins') return runAdminsCommand(argv.slice(1));
  const { values } = parseCommandArgs(argv, { port: { type: 'string' }, 'data-dir': { type: 'string' } }, { allowPositionals: false });
  const overrides: ConfigOverrides = { dataDir: values['data-dir'], port: values.port === undefined ? undefined : Number(values.port) };
  if (overrides.port !== undefined && (!Number.isInteger(overrides.port) || overrides.port < 0 || overrides.port > 65535)) {
    throw new UsageError(`--port must be a port number (got "${values.port}")`);
  }
  const config = loadConfig(process.env, overrides);
  const { url } = await startRegistry(config);
  console.log(`Registry ready at ${url}/api/v1  (docs: ${url}/api/docs)`);
  return -1;
}

async function runAdminsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { 'data-dir': { type: 'string' } });
  const [action, userId] = positionals;
  if ((action !== 'grant' && action !== 'revoke') || !userId) throw new UsageError('usage: tb registry admins grant|revoke USER_ID');
  const config = loadConfig(process.env, { dataDir: values['data-dir'] });
  const app = await NestFactory.createApplicationContext(RegistryServiceModule.forRoot(config), { logger: ['error', 'warn'] });
  try {
    const user = await app.get(UsersService).setAdmin(userId, action === 'grant');
    console.log(`${action === 'grant' ? 'Granted' : 'Revoked'} admin for platform user ${user.platformUserId}`);
  } finally {
    await app.close();
  }
  return 0;
}
