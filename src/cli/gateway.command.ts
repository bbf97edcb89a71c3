import { createHttpApp, listen } from '../apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../apps/gateway.app-module.js';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import { GatewaySettingsService } from '../modules/gateway/index.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

export async function startGateway(config: PlatformConfig) {
  const app = await createHttpApp(GatewayAppModule.forRoot(config), gatewayHttpAppOptions(config));
  const url = await listen(app, config.gateway, 'Gateway');
  return { app, url };
}

/** Starts the gateway and says where; on the first start (a new config file) prints the admin key, once. */
export async function serveGateway(config: PlatformConfig, io: CommandIo) {
  const started = await startGateway(config);
  const settings = started.app.get(GatewaySettingsService);
  io.out(`Gateway ready at ${started.url}/v1  (docs: ${started.url}/docs; model runtime: ${settings.ollamaUrl})`);
  if (settings.createdAdminKey) {
    const kept = settings.store === 'file' ? `it stays in ${settings.path}` : 'the database keeps only its hash';
    io.out(`Admin key (shown once; ${kept}): ${settings.createdAdminKey}`);
  }
  return started;
}

/** `tb gateway [--port N] [--data-dir DIR]`: the model gateway (default port 4000). */
export async function runGatewayCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { port: { type: 'string' }, 'data-dir': { type: 'string' } },
    { allowPositionals: false },
  );
  const config = loadConfig(io.env, {
    services: ['gateway'],
    dataDir: values['data-dir'],
    gatewayPort: portFlag(values.port),
  });
  await serveGateway(config, io);
  return -1;
}
