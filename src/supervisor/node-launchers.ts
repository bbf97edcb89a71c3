import type { ChildProcess } from 'node:child_process';
import { fork } from 'node:child_process';
import cluster, { type Worker } from 'node:cluster';
import type { ChildHandle, ChildLauncher, Supervisor } from './supervisor.js';

/** Exit status of a forked child whose supervisor went away (its IPC channel closed). */
export const ORPHANED_EXIT_CODE = 75;

/**
 * Preloaded into every forked child (`--import`): exit as soon as the IPC channel to the supervisor
 * closes, which happens when the supervisor dies in any way, SIGKILL included, that no handler of
 * the supervisor's own can catch. Node's cluster workers do the same by themselves.
 */
export const EXIT_WITH_PARENT_IMPORT = `data:text/javascript,process.once("disconnect",()=>process.exit(${ORPHANED_EXIT_CODE}))`;

export interface ForkLauncherOptions {
  /** The Node.js script each child runs. */
  modulePath: string;
  args?: readonly string[];
  /** Added to this process's environment; each child also gets `SUPERVISOR_SLOT`. */
  env?: NodeJS.ProcessEnv;
  /** Node options of the child (default none; the exit-with-parent preload is always added). */
  execArgv?: readonly string[];
  /** Pipe the child's stdout and stderr instead of sharing ours (default false). */
  silent?: boolean;
}

/** Launches each child with node:child_process `fork` (an IPC channel, the exit-with-parent preload). */
export function forkLauncher(options: ForkLauncherOptions): ChildLauncher {
  return (slot) =>
    childProcessHandle(
      fork(options.modulePath, [...(options.args ?? [])], {
        // A child inherits this process's environment, as every child process does; nothing here reads a setting.
        // eslint-disable-next-line no-restricted-properties
        env: { ...process.env, ...options.env, SUPERVISOR_SLOT: String(slot) },
        execArgv: [...(options.execArgv ?? []), '--import', EXIT_WITH_PARENT_IMPORT],
        silent: options.silent ?? false,
      }),
    );
}

/** Launches each child as a node:cluster worker of this (primary) process, so all share its ports. */
export function clusterLauncher(env: NodeJS.ProcessEnv = {}): ChildLauncher {
  return (slot) => clusterWorkerHandle(cluster.fork({ ...env, SUPERVISOR_SLOT: String(slot) }));
}

export function childProcessHandle(child: ChildProcess): ChildHandle {
  let exitListener: ((code: number | null, signal: string | null) => void) | undefined;
  let exited = false;
  const exit = (code: number | null, signal: string | null) => {
    if (exited) return;
    exited = true;
    exitListener?.(code, signal);
  };
  child.on('exit', exit);
  // A child that could not be spawned emits 'error' and never 'exit'.
  child.on('error', () => {
    if (child.pid === undefined) exit(null, null);
  });
  return {
    pid: child.pid,
    send: (message) => (child.connected ? child.send(message as object) : false),
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => {
      exitListener = listener;
    },
  };
}

export function clusterWorkerHandle(worker: Worker): ChildHandle {
  return {
    pid: worker.process.pid,
    send: (message) => (worker.isConnected() ? worker.send(message as object) : false),
    kill: (signal) => {
      if (!worker.isDead()) worker.process.kill(signal);
    },
    onMessage: (listener) => worker.on('message', listener),
    onExit: (listener) => worker.on('exit', listener),
  };
}

/**
 * Ties a supervisor to this process: its children are SIGKILLed when this process exits (normally or on
 * an uncaught error), and on SIGTERM/SIGINT they are stopped gracefully before this process exits.
 * Returns the function that unbinds it.
 */
export function bindToProcess(
  supervisor: Supervisor,
  options: { signals?: NodeJS.Signals[]; exitCode?: number } = {},
): () => void {
  const onExit = () => supervisor.killAllNow();
  const onSignal = () => {
    void supervisor.stop().then(() => process.exit(options.exitCode ?? 0));
  };
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  process.on('exit', onExit);
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    process.off('exit', onExit);
    for (const signal of signals) process.off(signal, onSignal);
  };
}
