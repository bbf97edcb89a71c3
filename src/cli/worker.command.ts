import { startHttpWorkerApp, type RunningHttpWorker } from '../apps/http-worker.app-module.js';
import { UsageError } from '../common/errors.js';
import { loadConfig } from '../config/config.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

const USAGE =
  'usage: tb worker http [--port N] [--worker-id ID] [--data-dir DIR] | tb worker ws [--port N] [--data-dir DIR]';

/** `tb worker http|ws …`: one worker process (the manager starts several; each can also run alone). */
export async function runWorkerCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [kind, ...rest] = argv;
  if (kind === 'http') return runHttpWorker(rest, io);
  if (kind === 'ws') return (await import('./worker-ws.command.js')).runWsWorker(rest, io);
  throw new UsageError(USAGE);
}

/** `tb worker http [--port N] [--worker-id ID]`: serves until SIGTERM/SIGINT, then drains and exits. */
async function runHttpWorker(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { port: { type: 'string' }, 'worker-id': { type: 'string' }, 'data-dir': { type: 'string' } },
    { allowPositionals: false },
  );
  const workerId = values['worker-id'];
  if (workerId !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(workerId))
    throw new UsageError(`--worker-id must be 1–64 letters, digits, dots, dashes or underscores (got "${workerId}")`);
  const config = loadConfig(io.env, {
    services: ['httpWorker'],
    dataDir: values['data-dir'],
    httpWorkerPort: portFlag(values.port),
    httpWorkerId: workerId,
  });
  const worker = await startHttpWorkerApp(config);
  io.out(
    `HTTP worker ${worker.lifecycle.workerId} ready at ${worker.url}  (functions: ${worker.url}/api/{module}/{function}; docs: ${worker.url}/docs/api)`,
  );
  stopOnSignal(worker, io);
  return -1;
}

/** SIGTERM/SIGINT: drain (DRAIN_TIMEOUT_SECONDS), then exit 0, or 1 when the deadline cut requests short. */
function stopOnSignal(worker: RunningHttpWorker, io: CommandIo): void {
  const stop = (signal: NodeJS.Signals) => {
    io.out(`HTTP worker ${worker.lifecycle.workerId}: ${signal}, draining ${worker.lifecycle.inFlight} request(s)`);
    worker.drain().then(
      (finished) => {
        io.out(`HTTP worker ${worker.lifecycle.workerId}: ${finished ? 'drained' : 'drain deadline passed'}, exiting`);
        process.exit(finished ? 0 : 1);
      },
      (error: unknown) => {
        io.err(`HTTP worker ${worker.lifecycle.workerId}: drain failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
