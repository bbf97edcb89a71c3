import { createHttpApp, listen } from '../apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../apps/gateway.app-module.js';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';
import { portFlag } from './registry.command.js';

export async function startGateway(config: PlatformConfig) {
  const app = await createHttpApp(GatewayAppModule.forRoot(config), gatewayHttpAppOptions(config));
  const url = await listen(app, config.gateway, 'Gateway');
  return { app, url };
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
  const { url } = await startGateway(config);
  io.out(
    `Gateway ready at ${url}/v1  (docs: ${url}/docs; model runtime: ${config.gateway.ollamaUrl ?? 'see DATA_DIR/gateway/config.json'})`,
  );
  return -1;
}
