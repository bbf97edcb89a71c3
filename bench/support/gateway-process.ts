import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A gateway started in a process of its own for a benchmark, and how to stop it. */
export interface GatewayProcess {
  baseUrl: string;
  /** The CPU time (user + system, µs) the gateway process has used so far, as it reports it (process.cpuUsage). */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Runs the gateway (as `tb gateway` builds it) in a process of its own on a free loopback port over `dataDir`
 * (its `gateway/config.json` and SQLite file, unless the environment names another DATABASE_URL), with the
 * runtime at `ollamaUrl`. With `cpuProfileDir` the process runs under `node --cpu-prof` and writes its profile
 * there when stopped (it closes the app first, so the last settlements are written too).
 */
export async function startGatewayProcess(options: {
  dataDir: string;
  ollamaUrl: string;
  cpuProfileDir?: string;
}): Promise<GatewayProcess> {
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const child = spawn(process.execPath, [...profile, fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      DATA_DIR: options.dataDir,
      OLLAMA_URL: options.ollamaUrl,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /Gateway process ready at (http:\/\/\S+)/.exec(output);
      if (ready) resolve(ready[1]);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return {
    baseUrl,
    cpuMicros: () =>
      new Promise<number>((resolve) => {
        child.once('message', (usage: { user: number; system: number }) => resolve(usage.user + usage.system));
        child.send('cpu');
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function serve(): Promise<void> {
  const { createHttpApp, listen } = await import('../../src/apps/create-http-app.js');
  const { GatewayAppModule, gatewayHttpAppOptions } = await import('../../src/apps/gateway.app-module.js');
  const { loadConfig } = await import('../../src/config/config.js');
  const config = loadConfig(process.env, { services: ['gateway'] });
  const app = await createHttpApp(GatewayAppModule.forRoot(config), {
    ...gatewayHttpAppOptions(config),
    logger: ['error'],
    docsPath: false,
  });
  const url = await listen(app, config.gateway, 'Gateway');
  process.once('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
  });
  process.on('message', () => process.send?.(process.cpuUsage()));
  console.log(`Gateway process ready at ${url}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void serve().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
