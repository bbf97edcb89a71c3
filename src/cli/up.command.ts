import { fork } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import { findNginx, nginxPaths, runningManager } from '../modules/workers/index.js';
import {
  EXIT_WITH_PARENT_IMPORT,
  Supervisor,
  childProcessHandle,
  type ChildHandle,
  type SupervisorEvent,
} from '../supervisor/index.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';
import { ensurePersistedSecret } from './platform-secret.js';
import {
  UP_SERVICES,
  healthUrl,
  reachableHost,
  selectServices,
  serviceArgv,
  stopDeadlineMs,
  upTrustProxy,
  type UpService,
} from './up-services.js';

const TITLES: Record<UpService, string> = {
  registry: 'Registry',
  mcp: 'MCP',
  gateway: 'Gateway',
  manager: 'Workers',
};

/** A service that is not ready by then fails `tb up` (the manager waits for every worker's first /health). */
const READY_TIMEOUT_MS = 180_000;

interface RunningService {
  name: UpService;
  supervisor: Supervisor;
  /** Resolves once the service answers; rejects when it exits or is not ready in time before that. */
  ready: Promise<void>;
}

/**
 * `tb up` (`npm start`): the whole platform on its embedded defaults — the registry, the MCP transport, the model
 * gateway and the worker manager with its HTTP and WS workers — each a supervised child process (`tb registry`,
 * `tb mcp`, `tb gateway`, `tb workers start`) sharing one DATA_DIR and one platform secret (generated and kept in
 * the data directory when PLATFORM_JWT_SECRET is unset). Ctrl+C / SIGTERM stops them all and exits 0.
 */
export async function runUpCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      workers: { type: 'string' },
      services: { type: 'string' },
      ...Object.fromEntries(UP_SERVICES.map((name) => [`no-${name}`, { type: 'boolean' as const }])),
    },
    { allowPositionals: false },
  );
  const flags = values as Record<string, string | boolean | undefined>;
  const services = selectServices(
    (values.services as string | undefined) ?? io.env.UP_SERVICES,
    UP_SERVICES.filter((name) => flags[`no-${name}`] === true),
  );
  const registryPort = portFlag(values.port as string | undefined);
  const shared = loadConfig(io.env, { dataDir: values['data-dir'] as string | undefined });
  const jwtSecret = shared.jwtSecret ?? (await ensurePersistedSecret(shared.dataDir));
  const config = loadConfig(io.env, { dataDir: shared.dataDir, jwtSecret, port: registryPort });
  const env: NodeJS.ProcessEnv = { ...io.env, DATA_DIR: config.dataDir, PLATFORM_JWT_SECRET: jwtSecret };
  const trustProxy = upTrustProxy(io.env.TRUST_PROXY, services, await nginxSiteConfigured(config));
  if (trustProxy !== undefined) env.TRUST_PROXY = trustProxy;

  const busy = await busyPorts(services, config);
  if (busy.length > 0) {
    io.err(`tb up: ${busy.join(', ')} in use (is the platform already running?); nothing started`);
    return 1;
  }

  const running: RunningService[] = [];
  let stopping = false;
  const killAll = () => running.forEach((service) => service.supervisor.killAllNow());
  process.on('exit', killAll);
  const stopAll = async (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    io.out(`tb up: ${reason}, stopping ${running.map((service) => service.name).join(', ') || 'nothing'}`);
    await Promise.all(running.map((service) => service.supervisor.stop()));
    io.out('tb up: stopped');
    process.exit(code);
  };
  process.on('SIGTERM', () => void stopAll('SIGTERM', 0));
  process.on('SIGINT', () => void stopAll('SIGINT', 0));

  // One after the other: the registry migrates the shared database before the others open it.
  for (const name of services) {
    if (stopping) return -1;
    const service = superviseService(name, config, env, registryPort, values.workers as string | undefined, io);
    running.push(service);
    try {
      await service.ready;
    } catch (error) {
      io.err(`tb up: ${(error as Error).message}`);
      await stopAll(`${name} did not start`, 1);
      return -1;
    }
  }
  io.out(await banner(services, config));
  return -1;
}

/** Starts one service under its own supervisor (restarts after a crash once it was ready). */
function superviseService(
  name: UpService,
  config: PlatformConfig,
  env: NodeJS.ProcessEnv,
  registryPort: number | undefined,
  workers: string | undefined,
  io: CommandIo,
): RunningService {
  let ready = false;
  let failStart: (error: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (failStart = reject));
  const supervisor = new Supervisor({
    launch: () => launchPrefixed(name, serviceArgv(name, { registryPort, workers }), env, io),
    readiness: {
      probe: (child) => serviceAnswers(name, config, child),
      probeIntervalMs: 250,
      timeoutMs: READY_TIMEOUT_MS,
    },
    backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000, stablePeriodMs: 60_000 },
    stopDeadlineMs: stopDeadlineMs(name, config),
    onEvent: (event: SupervisorEvent) => {
      if (event.type === 'exited' && !event.expected) {
        const how = event.signal ?? `code ${event.code}`;
        if (!ready) failStart(new Error(`${name} exited (${how}) before it was ready; its output is above`));
        else io.err(`tb up: ${name} exited (${how}); restarting it`);
      } else if (event.type === 'not-ready') failStart(new Error(`${name} was not ready in ${event.afterMs} ms`));
    },
  });
  const started = Promise.race([supervisor.start(), failed]).then(() => {
    ready = true;
  });
  return { name, supervisor, ready: started };
}

/** `tb <argv>` as a forked child (exits with its parent) whose output lines are prefixed with the service name. */
function launchPrefixed(name: UpService, argv: string[], env: NodeJS.ProcessEnv, io: CommandIo): ChildHandle {
  const child = fork(process.argv[1], argv, {
    env,
    execArgv: [...process.execArgv, '--import', EXIT_WITH_PARENT_IMPORT],
    silent: true,
  });
  const pipe = (stream: Readable | null, write: (line: string) => void) => {
    if (stream) createInterface({ input: stream }).on('line', (line) => write(`[${name}] ${line}`));
  };
  pipe(child.stdout, (line) => io.out(line));
  pipe(child.stderr, (line) => io.err(line));
  return childProcessHandle(child);
}

/** The service's liveness URL answers 200; for the manager, its own state file names it and every worker is up. */
async function serviceAnswers(name: UpService, config: PlatformConfig, child: ChildHandle): Promise<boolean> {
  try {
    if (name !== 'manager') return (await fetch(healthUrl(name, config))).status === 200;
    const state = await runningManager(config);
    if (!state?.api || state.pid !== child.pid) return false;
    const response = await fetch(`${state.api}/api/health`, { headers: { 'x-cluster-secret': state.secret } });
    return response.status === 200 && ((await response.json()) as { healthy: boolean }).healthy;
  } catch {
    return false;
  }
}

/**
 * The fixed ports of the selected services that something else holds. Checked before anything starts: a service
 * whose port is taken would otherwise pass its readiness probe on the other process. (The manager's admin API
 * moves to the next free port by itself.)
 */
async function busyPorts(services: UpService[], config: PlatformConfig): Promise<string[]> {
  const wanted: { what: string; host: string; port: number }[] = [];
  if (services.includes('registry')) wanted.push({ what: 'registry', ...config.registry });
  if (services.includes('mcp')) wanted.push({ what: 'mcp', ...config.mcp });
  if (services.includes('gateway')) wanted.push({ what: 'gateway', ...config.gateway });
  if (services.includes('manager')) {
    for (let i = 0; i < config.httpWorker.count; i++)
      wanted.push({ what: 'HTTP worker', host: config.httpWorker.host, port: config.httpWorker.basePort + i });
    for (let i = 0; i < config.wsWorker.count; i++)
      wanted.push({ what: 'WS worker', host: config.wsWorker.host, port: config.wsWorker.basePort + i });
  }
  const taken = await Promise.all(wanted.map((entry) => portTaken(entry.host, entry.port)));
  return wanted.filter((_, index) => taken[index]).map((entry) => `port ${entry.port} (${entry.what})`);
}

function portTaken(host: string, port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

/** Every URL, how to get a token, and what nginx does (or how to set it up). */
async function banner(services: UpService[], config: PlatformConfig): Promise<string> {
  const lines = ['', 'Toolbox Platform is up (Ctrl+C stops everything).'];
  const row = (title: string, text: string) => lines.push(`  ${title.padEnd(9)} ${text}`);
  const at = (listen: { host: string; port: number }) => `http://${reachableHost(listen.host)}:${listen.port}`;
  for (const name of services) {
    if (name === 'registry') {
      const url = at(config.registry);
      row(TITLES[name], `${url}/api/v1   (Swagger UI ${url}/api/docs)`);
    } else if (name === 'mcp') {
      const url = at(config.mcp);
      row(TITLES[name], `${url}/mcp   (REST door ${url}/mcp/tools/list; keys: npx tb mcp keys create NAME)`);
    } else if (name === 'gateway') {
      const url = at(config.gateway);
      row(TITLES[name], `${url}/v1   (docs ${url}/docs; models need a running Ollama, docs/gateway.md)`);
    } else {
      const state = await runningManager(config);
      const worker = config.httpWorker;
      row(
        TITLES[name],
        `HTTP ${at({ host: worker.host, port: worker.basePort })}… (${worker.count}), ` +
          `WS ${at({ host: config.wsWorker.host, port: config.wsWorker.basePort }).replace('http', 'ws')}/ws`,
      );
      row('Manager', `${state?.api ?? '?'}/   (admin API ${state?.api ?? '?'}/api; npx tb workers status)`);
    }
  }
  row('Data', `${config.dataDir} (${config.database.type}, objects in ${config.storage.primary})`);
  lines.push(
    `  Get a token: npx tb token --user 1 --username you --data-dir ${config.dataDir}  (--admin for an admin)`,
  );
  if (services.includes('manager')) lines.push(`  ${await nginxLine(config)}`);
  return lines.join('\n');
}

async function nginxLine(config: PlatformConfig): Promise<string> {
  const binary = await findNginx(config);
  if (!binary) return 'nginx: not installed — running without it; the workers answer on their own ports.';
  const site = nginxPaths(config).sitePath;
  if (await nginxSiteConfigured(config)) {
    return `nginx: ${binary}, site ${site} (the manager rewrites and reloads it; the services trust its X-Forwarded-For)`;
  }
  return (
    `nginx: installed (${binary}) but not set up for the platform — run, as root, "npx tb workers nginx-init", ` +
    '"npx tb workers nginx-config --write-htpasswd" and "npx tb workers nginx-reload" (docs/workers.md § nginx).'
  );
}

/** Whether the platform's nginx site exists (written by `tb workers nginx-config`). */
function nginxSiteConfigured(config: PlatformConfig): Promise<boolean> {
  return stat(nginxPaths(config).sitePath).then(
    (s) => s.isFile(),
    () => false,
  );
}
