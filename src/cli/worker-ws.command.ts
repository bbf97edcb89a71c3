import { createHttpApp, listen, type HttpAppOptions } from '../apps/create-http-app.js';
import { WsWorkerAppModule, wsWorkerHttpAppOptions } from '../apps/ws-worker.app-module.js';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import type { AppCoreOptions } from '../modules/app-core/index.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

/** Starts one WebSocket worker on `config.wsWorker` (host, basePort); returns the app and its URL. */
export async function startWsWorker(
  config: PlatformConfig,
  overrides: Partial<AppCoreOptions> = {},
  httpOptions: Partial<HttpAppOptions> = {},
) {
  const app = await createHttpApp(WsWorkerAppModule.forRoot(config, overrides), {
    ...wsWorkerHttpAppOptions(config),
    ...httpOptions,
  });
  const url = await listen(app, { host: config.wsWorker.host, port: config.wsWorker.basePort }, 'WsWorker');
  return { app, url };
}

/**
 * `tb worker ws [--port 8100] [--data-dir DIR]`: one WebSocket worker. Started by the worker manager (a
 * forked child), it reports `{tb: 'listening', url}` to its parent, as the clustered registry's workers do.
 */
export async function runWsWorker(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { port: { type: 'string' }, 'data-dir': { type: 'string' } },
    { allowPositionals: false },
  );
  const port = portFlag(values.port);
  const config = loadConfig(io.env, { services: ['wsWorker'], dataDir: values['data-dir'] });
  if (port !== undefined) config.wsWorker.basePort = port;
  const { url } = await startWsWorker(config);
  process.send?.({ tb: 'listening', url });
  io.out(`WebSocket worker ready at ${url.replace(/^http/, 'ws')}/ws/{Module}/{handler}  (health: ${url}/health)`);
  return -1;
}
