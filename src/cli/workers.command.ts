import { UsageError } from '../common/errors.js';
import { loadConfig } from '../config/config.js';
import { ManagerProcess, processAlive, runningManager, type WorkerRecord } from '../modules/workers/index.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

const USAGE = 'usage: tb workers start [--no-ui] [--data-dir DIR] | status [--json] | stop';

/** `tb workers …`: the worker manager (docs/workers.md). */
export async function runWorkersCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'start') return startManager(rest, io);
  if (sub === 'status') return status(rest, io);
  if (sub === 'stop') return stopManager(rest, io);
  throw new UsageError(USAGE);
}

function managerConfig(argv: string[], io: CommandIo) {
  const { values } = parseCommandArgs(
    argv,
    { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, 'no-ui': { type: 'boolean' } },
    { allowPositionals: false },
  );
  return { values, config: loadConfig(io.env, { dataDir: values['data-dir'] }) };
}

/** `tb workers start`: runs the manager in the foreground until SIGTERM/SIGINT; a second start says so and exits 0. */
async function startManager(argv: string[], io: CommandIo): Promise<number> {
  const { config } = managerConfig(argv, io);
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
  const killAll = () => manager.manager.killAllNow();
  process.on('exit', killAll);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    io.out(`manager: ${signal}, stopping every worker (they drain)`);
    manager.stop().then(
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
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const workers = await manager.start();
  io.out(`Worker manager ready (pid ${process.pid}), ${workers.length} worker(s):`);
  io.out(formatWorkers(workers));
  return -1;
}

async function status(argv: string[], io: CommandIo): Promise<number> {
  const { values, config } = managerConfig(argv, io);
  const state = await runningManager(config);
  if (!state) {
    io.err(`No worker manager is running for data dir ${config.dataDir} (start one with "tb workers start").`);
    return 1;
  }
  if (values.json) {
    const { secret: _secret, ...shown } = state;
    io.out(JSON.stringify(shown, null, 2));
    return 0;
  }
  io.out(`Worker manager pid ${state.pid}, up since ${state.started_at} (as of ${state.updated_at}):`);
  io.out(formatWorkers(state.workers));
  return 0;
}

/** `tb workers stop`: SIGTERM to the running manager, then waits until it (and so every worker) is gone. */
async function stopManager(argv: string[], io: CommandIo): Promise<number> {
  const { config } = managerConfig(argv, io);
  const state = await runningManager(config);
  if (!state) {
    io.out(`No worker manager is running for data dir ${config.dataDir}.`);
    return 0;
  }
  process.kill(state.pid, 'SIGTERM');
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
