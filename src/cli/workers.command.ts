import { createServer } from 'node:net';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { createHttpApp, listen } from '../apps/create-http-app.js';
import { ManagerAppModule, managerHttpAppOptions } from '../apps/manager.app-module.js';
import { UsageError } from '../common/errors.js';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import {
  ClusterRegistry,
  ManagerProcess,
  NginxProxyControl,
  processAlive,
  runningManager,
  type RollingUpdateState,
  type WorkerRecord,
} from '../modules/workers/index.js';
import { NGINX_SUBCOMMANDS, proxyControlFor, runNginxSubcommand } from './workers-nginx.command.js';
import { clusterJoin, clusterLeave } from './workers-cluster.command.js';
import { managerRequest } from './manager-client.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

const USAGE = [
  'usage: tb workers <command> [--data-dir DIR]',
  '  start [--no-ui]                 run the manager in the foreground (Ctrl+C stops everything)',
  '  status [--json]                 workers, nginx and cluster of the running manager',
  '  stop | restart | update         graceful shutdown | stop, wait, start | rolling update of the HTTP workers',
  '  worker-start -t http|ws [-w ID] start one worker (auto id and port, or the given id)',
  '  worker-stop -w ID               stop one worker (it drains first)',
  '  scale -t http|ws -n COUNT       scale a worker type within the pre-allocated ports',
  '  nginx-init | nginx-config [--write-htpasswd] [--force] | nginx-check | nginx-reload',
  '  cluster-join --host H [--port 9005] [--secret S] | cluster-leave --node HOST:PORT',
].join('\n');

/** `tb workers …`: the worker manager (docs/workers.md). */
export async function runWorkersCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'start':
      return startManager(rest, io);
    case 'status':
      return status(rest, io);
    case 'stop':
      return stopManager(rest, io);
    case 'restart':
      return callManager(rest, io, 'POST', 'restart', undefined, (body) => {
        const workers = (body as { workers: WorkerRecord[] }).workers;
        return `Restarted: ${workers.length} worker(s).\n${formatWorkers(workers)}`;
      });
    case 'update':
      return rollingUpdate(rest, io);
    case 'worker-start':
      return workerStart(rest, io);
    case 'worker-stop':
      return workerStop(rest, io);
    case 'scale':
      return scale(rest, io);
    default:
      if (sub && NGINX_SUBCOMMANDS.has(sub)) return runNginxSubcommand(sub, rest, io);
      if (sub === 'cluster-join') return clusterJoin(rest, io);
      if (sub === 'cluster-leave') return clusterLeave(rest, io);
      throw new UsageError(USAGE);
  }
}

const COMMON_FLAGS = { 'data-dir': { type: 'string' }, json: { type: 'boolean' } } as const;

function managerConfig(argv: string[], io: CommandIo) {
  const { values } = parseCommandArgs(
    argv,
    { ...COMMON_FLAGS, 'no-ui': { type: 'boolean' } },
    { allowPositionals: false },
  );
  return { values, config: loadConfig(io.env, { dataDir: values['data-dir'] }) };
}

/** `tb workers start`: runs the manager in the foreground until SIGTERM/SIGINT; a second start says so and exits 0. */
async function startManager(argv: string[], io: CommandIo): Promise<number> {
  const { config, values } = managerConfig(argv, io);
  // The workers need the platform secret; checking it here fails fast instead of in every child.
  loadConfig(io.env, { services: ['httpWorker', 'wsWorker'], dataDir: config.dataDir });
  const running = await runningManager(config);
  if (running) {
    io.out(`The worker manager is already running (pid ${running.pid}, data dir ${config.dataDir}).`);
    return 0;
  }
  const manager = new ManagerProcess(config, {
    entry: process.argv[1],
    execArgv: process.execArgv,
    env: io.env as NodeJS.ProcessEnv,
    log: (line) => io.out(line),
  });
  await manager.init();
  manager.proxy = await proxyControlFor(config, manager.secret);
  const cluster = await clusterRegistryFor(config, manager, io);
  const killAll = () => manager.manager.killAllNow();
  process.on('exit', killAll);
  let stopping = false;
  const started: { app?: INestApplication } = {};
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    io.out(`manager: ${reason}, stopping every worker (they drain)`);
    cluster.stop();
    manager
      .stop()
      .then(() => started.app?.close())
      .then(
        () => {
          io.out('manager: stopped');
          process.exit(0);
        },
        (error: unknown) => {
          io.err(`manager: stop failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const ui = !values['no-ui'];
  const app = await createHttpApp(
    ManagerAppModule.forRoot(config, manager, () => stop('shutdown requested')),
    { ...managerHttpAppOptions(config, { ui }), shutdownHooks: false },
  );
  started.app = app;
  const port = await firstFreePort(config.manager.host, config.manager.port, 4);
  manager.apiUrl = await listen(app, { host: config.manager.host, port }, 'WorkerManager');
  manager.uiUrl = ui ? `${manager.apiUrl}/` : null;
  if (manager.proxy instanceof NginxProxyControl) manager.proxy.setManagerPort(Number(new URL(manager.apiUrl).port));
  const workers = await manager.start();
  await manager.syncProxy();
  cluster.start(config.manager.clusterPollSeconds * 1000);
  const nginx = await manager.proxy.status();
  io.out(`Worker manager ready (pid ${process.pid}), ${workers.length} worker(s):`);
  io.out(formatWorkers(workers));
  // Never the secret itself in the output: only where it lives.
  const secretSource = config.manager.clusterSecret
    ? 'CLUSTER_SECRET'
    : `the file ${join(config.dataDir, 'manager-secret')}`;
  io.out(`Admin API: ${manager.apiUrl}/api (docs ${manager.apiUrl}/api/docs; X-Cluster-Secret: ${secretSource})`);
  if (ui) {
    io.out(`Dashboard: ${manager.uiUrl} (opened directly it asks for the manager secret: ${secretSource})`);
  }
  io.out(
    nginx.configured
      ? `nginx: ${nginx.version ?? 'installed'}, site ${nginx.site_path} (lists every worker port: scaling and rolling updates reload nothing)`
      : nginx.installed
        ? 'nginx: installed but not set up for this manager (tb workers nginx-config; docs/workers.md)'
        : 'nginx: not installed — the workers are reached on their own ports (docs/workers.md § nginx)',
  );
  return -1;
}

/** The nodes this manager joined (DATA_DIR/cluster-nodes.json); their healthy HTTP workers become nginx backups. */
async function clusterRegistryFor(config: PlatformConfig, manager: ManagerProcess, io: CommandIo) {
  const cluster = new ClusterRegistry({
    filePath: join(config.dataDir, 'cluster-nodes.json'),
    ownSecret: manager.secret,
    log: (line) => io.out(`manager: ${line}`),
    onBackupsChanged: async (backups) => {
      const result = await manager.rewriteProxy(backups);
      io.out(`manager: ${backups.length} cluster backup server(s); nginx ${result.ok ? 'rewritten' : result.message}`);
    },
  });
  await cluster.load();
  manager.cluster = cluster;
  return cluster;
}

/** The first port from `port` up to `port + extra` that accepts a listener (0 = any free port). */
async function firstFreePort(host: string, port: number, extra: number): Promise<number> {
  if (port === 0) return 0;
  for (let candidate = port; candidate <= port + extra; candidate++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(candidate, host, () => server.close(() => resolve(true)));
    });
    if (free) return candidate;
  }
  throw new Error(`ports ${port}–${port + extra} on ${host} are all busy (MANAGER_PORT)`);
}

/** One admin API call on the running manager; prints the answer (JSON with --json, else `describe(body)`). */
async function callManager(
  argv: string[],
  io: CommandIo,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  describe: (body: unknown) => string,
  flags: Record<string, { type: 'string' | 'boolean'; short?: string }> = {},
): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...COMMON_FLAGS, ...flags }, { allowPositionals: false });
  const config = loadConfig(io.env, { dataDir: values['data-dir'] as string | undefined });
  try {
    const answer = await managerRequest(config, method, path, body);
    io.out(values.json ? JSON.stringify(answer, null, 2) : describe(answer));
    return 0;
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
}

async function status(argv: string[], io: CommandIo): Promise<number> {
  const { values, config } = managerConfig(argv, io);
  let answer: Awaited<ReturnType<ManagerProcess['status']>>;
  try {
    answer = (await managerRequest(config, 'GET', 'status')) as typeof answer;
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
  if (values.json) {
    io.out(JSON.stringify(answer, null, 2));
    return 0;
  }
  io.out(`Worker manager pid ${answer.pid}, up since ${answer.started_at}, API ${answer.api}:`);
  io.out(formatWorkers(Object.values(answer.workers)));
  io.out(
    `broker ${answer.broker.driver}; nginx ${answer.nginx.configured ? 'set up' : answer.nginx.installed ? 'installed, not set up' : 'not installed'}; ` +
      `cluster ${answer.cluster.healthy_nodes}/${answer.cluster.nodes} node(s) healthy`,
  );
  for (const node of answer.cluster.members)
    io.out(
      `  node ${node.id}: ${node.healthy ? `healthy, ${node.workers.length} worker(s)` : `unhealthy (${node.last_error ?? 'not polled yet'})`}`,
    );
  if (answer.rolling_update)
    io.out(
      `rolling update ${answer.rolling_update.id}: ${answer.rolling_update.state}, ` +
        `${answer.rolling_update.done}/${answer.rolling_update.total} (${answer.rolling_update.step})`,
    );
  return 0;
}

/** `tb workers update`: starts a rolling update and follows it until it ends. */
async function rollingUpdate(argv: string[], io: CommandIo): Promise<number> {
  const { values, config } = managerConfig(argv, io);
  try {
    const started = (await managerRequest(config, 'POST', 'rolling-update')) as { rolling_update: RollingUpdateState };
    io.out(`Rolling update ${started.rolling_update.id} of ${started.rolling_update.total} HTTP worker(s) started.`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = ((await managerRequest(config, 'GET', 'status')) as { rolling_update: RollingUpdateState })
        .rolling_update;
      if (now.state === 'running') continue;
      if (values.json) io.out(JSON.stringify(now, null, 2));
      else {
        for (const pair of now.replaced) io.out(`  ${pair.old} → ${pair.new}`);
        for (const error of now.errors) io.err(`  ✗ ${error}`);
        io.out(`Rolling update ${now.id}: ${now.state} (${now.replaced.length}/${now.total} replaced).`);
      }
      return now.state === 'done' ? 0 : 1;
    }
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
}

async function workerStart(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...COMMON_FLAGS, type: { type: 'string', short: 't' }, 'worker-id': { type: 'string', short: 'w' } },
    { allowPositionals: false },
  );
  if (values.type !== 'http' && values.type !== 'ws')
    throw new UsageError('usage: tb workers worker-start -t http|ws [-w ID]');
  const body = { type: values.type, ...(values['worker-id'] ? { worker_id: values['worker-id'] } : {}) };
  return callManager(
    stripFlags(argv, ['-t', '--type', '-w', '--worker-id']),
    io,
    'POST',
    'workers/start',
    body,
    (answer) => formatWorkers((answer as { workers: WorkerRecord[] }).workers),
  );
}

async function workerStop(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...COMMON_FLAGS, 'worker-id': { type: 'string', short: 'w' } },
    { allowPositionals: false },
  );
  if (!values['worker-id']) throw new UsageError('usage: tb workers worker-stop -w ID');
  return callManager(
    stripFlags(argv, ['-w', '--worker-id']),
    io,
    'POST',
    'workers/stop',
    { worker_id: values['worker-id'] },
    (answer) => `Stopped ${(answer as { worker: WorkerRecord }).worker.worker_id}.`,
  );
}

async function scale(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...COMMON_FLAGS, type: { type: 'string', short: 't' }, count: { type: 'string', short: 'n' } },
    { allowPositionals: false },
  );
  const count = Number(values.count);
  if ((values.type !== 'http' && values.type !== 'ws') || !Number.isInteger(count) || count < 0)
    throw new UsageError('usage: tb workers scale -t http|ws -n COUNT');
  return callManager(
    stripFlags(argv, ['-t', '--type', '-n', '--count']),
    io,
    'POST',
    'scale',
    { type: values.type, count },
    (answer) => {
      const { started, stopped } = answer as { started: string[]; stopped: string[] };
      return `Started: ${started.join(', ') || 'none'}; stopped: ${stopped.join(', ') || 'none'}.`;
    },
  );
}

/** The arguments without the given flags and their values (so `callManager` parses only the common ones). */
function stripFlags(argv: string[], names: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [name] = argv[i].split('=');
    if (names.includes(name)) {
      if (!argv[i].includes('=')) i++;
      continue;
    }
    kept.push(argv[i]);
  }
  return kept;
}

/** `tb workers stop`: asks the manager to shut down (SIGTERM when its API does not answer) and waits for it. */
async function stopManager(argv: string[], io: CommandIo): Promise<number> {
  const { config } = managerConfig(argv, io);
  const state = await runningManager(config);
  if (!state) {
    io.out(`No worker manager is running for data dir ${config.dataDir}.`);
    return 0;
  }
  try {
    await managerRequest(config, 'POST', 'shutdown');
  } catch {
    process.kill(state.pid, 'SIGTERM');
  }
  const deadline = Date.now() + (config.httpWorker.drainTimeoutSeconds + 15) * 1000;
  while (processAlive(state.pid)) {
    if (Date.now() > deadline) {
      io.err(`The worker manager (pid ${state.pid}) is still running after SIGTERM.`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  io.out(`Worker manager (pid ${state.pid}) stopped.`);
  return 0;
}

export function formatWorkers(workers: WorkerRecord[]): string {
  const rows = [['WORKER', 'TYPE', 'PORT', 'PID', 'STATE', 'HEALTHY', 'LATENCY', 'RESTARTS', 'LAST ERROR']];
  for (const w of workers)
    rows.push([
      w.worker_id,
      w.type,
      String(w.port),
      String(w.pid ?? '-'),
      w.state,
      w.healthy ? 'yes' : 'no',
      w.health_latency_ms === null ? '-' : `${w.health_latency_ms} ms`,
      String(w.restart_count),
      w.last_error ?? '',
    ]);
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
