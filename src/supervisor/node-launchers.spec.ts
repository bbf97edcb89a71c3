import { jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformFileSync } from '@swc/core';
import { forkLauncher } from './node-launchers.js';
import { Supervisor, type SupervisorEvent } from './supervisor.js';

// Real child processes: tiny scripts in a temp directory. Waits are bounded polls, never timing assertions.
jest.setTimeout(20_000);

const READY = `process.send({ tb: 'ready', pid: process.pid }); setInterval(() => undefined, 1000);\n`;
const CRASH_UNTIL_THIRD_RUN = `import { appendFileSync, readFileSync } from 'node:fs';
const runs = process.env.RUNS_FILE;
appendFileSync(runs, 'x');
if (readFileSync(runs, 'utf8').length < 3) process.exit(3);
${READY}`;
const IGNORES_SIGTERM = `process.on('SIGTERM', () => undefined);\n${READY}`;
const STOPS_ON_SIGTERM = `process.on('SIGTERM', () => process.exit(0));\n${READY}`;

let workspace: string;

/** Whether `pid` runs; a zombie (exited, not yet reaped by a container's init) counts as gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function waitFor(condition: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const giveUpAt = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function script(name: string, text: string): Promise<string> {
  const path = join(workspace, name);
  await writeFile(path, text);
  return path;
}

function supervise(modulePath: string, options: { env?: NodeJS.ProcessEnv; stopDeadlineMs?: number } = {}) {
  const events: SupervisorEvent[] = [];
  const supervisor = new Supervisor({
    launch: forkLauncher({ modulePath, env: options.env }),
    readiness: { message: (message) => (message as { tb?: string }).tb === 'ready', timeoutMs: 10_000 },
    backoff: { initialDelayMs: 10, factor: 2, maxDelayMs: 40, stablePeriodMs: 60_000 },
    stopDeadlineMs: options.stopDeadlineMs ?? 5_000,
    onEvent: (event) => events.push(event),
  });
  return { supervisor, events };
}

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'supervisor-'));
  await writeFile(join(workspace, 'package.json'), '{"type": "module"}');
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Supervisor over forked child processes', () => {
  it('restarts a crashing child until it comes up ready', async () => {
    const runsFile = join(workspace, 'runs');
    const { supervisor, events } = supervise(await script('crash.mjs', CRASH_UNTIL_THIRD_RUN), {
      env: { RUNS_FILE: runsFile },
    });
    await supervisor.start();
    const pid = supervisor.children()[0]!.handle.pid!;
    await supervisor.stop();
    const exits = events
      .filter((event) => event.type === 'exited')
      .map((event) => (event as { code: number | null }).code);
    expect([
      exits.slice(0, 2),
      events
        .filter((event) => event.type === 'restart-scheduled')
        .map((event) => (event as { delayMs: number }).delayMs),
      isAlive(pid),
    ]).toEqual([[3, 3], [10, 20], false]);
  });

  it('stops a child gracefully with SIGTERM', async () => {
    const { supervisor, events } = supervise(await script('graceful.mjs', STOPS_ON_SIGTERM));
    await supervisor.start();
    await supervisor.stop();
    expect(events.filter((event) => event.type === 'exited' || event.type === 'killed-after-deadline')).toEqual([
      expect.objectContaining({ type: 'exited', code: 0, expected: true }),
    ]);
  });

  it('SIGKILLs a child that ignores SIGTERM once the deadline passes', async () => {
    const { supervisor, events } = supervise(await script('stubborn.mjs', IGNORES_SIGTERM), { stopDeadlineMs: 300 });
    await supervisor.start();
    const pid = supervisor.children()[0]!.handle.pid!;
    await supervisor.stop();
    expect([events.map((event) => event.type).slice(-2), events.at(-1), isAlive(pid)]).toEqual([
      ['killed-after-deadline', 'exited'],
      expect.objectContaining({ signal: 'SIGKILL' }),
      false,
    ]);
  });
});

describe('no orphans', () => {
  let libDir: string;

  beforeAll(async () => {
    // The supervisor's own process must be a separate node process we can kill: run this folder's code
    // there, transpiled with the same SWC the tests use.
    libDir = join(workspace, 'lib');
    await mkdir(libDir);
    const sourceDir = dirname(fileURLToPath(import.meta.url));
    for (const file of await readdir(sourceDir)) {
      if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
      const { code } = transformFileSync(join(sourceDir, file), {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      });
      await writeFile(join(libDir, file.replace(/\.ts$/, '.js')), code);
    }
    await script('child.mjs', READY);
  });

  /** Starts a supervisor process running `body` (with `supervisor` started) and returns it with its child's pid. */
  async function supervisorProcess(launcher: string, body = ''): Promise<{ main: ChildProcess; childPid: number }> {
    const mainPath = await script(
      `main-${Math.random().toString(36).slice(2)}.mjs`,
      `import cluster from 'node:cluster';
import { Supervisor, bindToProcess, forkLauncher, clusterLauncher } from './lib/index.js';
if (cluster.isWorker) {
  await import('./child.mjs');
} else {
  const supervisor = new Supervisor({ launch: ${launcher}, readiness: { message: (m) => m?.tb === 'ready' } });
  bindToProcess(supervisor);
  await supervisor.start();
  console.log(JSON.stringify({ childPid: supervisor.children()[0].handle.pid }));
  ${body}
  setInterval(() => undefined, 1000);
}
`,
    );
    const main = spawn(process.execPath, [mainPath], { cwd: workspace, stdio: ['ignore', 'pipe', 'ignore'] });
    const childPid = await new Promise<number>((resolve, reject) => {
      let output = '';
      main.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split('\n').find((each) => each.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { childPid: number }).childPid);
      });
      main.on('exit', (code) => reject(new Error(`supervisor process exited early (${code})`)));
    });
    return { main, childPid };
  }

  it('a forked child exits when its supervisor is SIGKILLed', async () => {
    const { main, childPid } = await supervisorProcess("forkLauncher({ modulePath: './child.mjs' })");
    const aliveBefore = isAlive(childPid);
    main.kill('SIGKILL');
    await waitFor(() => !isAlive(childPid), `child ${childPid} to exit after its supervisor died`);
    expect([aliveBefore, isAlive(childPid)]).toEqual([true, false]);
  });

  it('a cluster worker exits when its supervisor is SIGKILLed', async () => {
    const { main, childPid } = await supervisorProcess('clusterLauncher()');
    const aliveBefore = isAlive(childPid);
    main.kill('SIGKILL');
    await waitFor(() => !isAlive(childPid), `worker ${childPid} to exit after its supervisor died`);
    expect([aliveBefore, isAlive(childPid)]).toEqual([true, false]);
  });

  it('children are killed when the supervisor process exits on an uncaught error', async () => {
    const { main, childPid } = await supervisorProcess(
      "forkLauncher({ modulePath: './child.mjs' })",
      "setTimeout(() => { throw new Error('supervisor bug'); }, 50);",
    );
    const exitCode = await new Promise<number | null>((resolve) => main.on('exit', (code) => resolve(code)));
    await waitFor(() => !isAlive(childPid), `child ${childPid} to exit with its supervisor`);
    expect([exitCode, isAlive(childPid)]).toEqual([1, false]);
  });

  it('SIGTERM to the supervisor stops its children and exits 0', async () => {
    const { main, childPid } = await supervisorProcess("forkLauncher({ modulePath: './child.mjs' })");
    const exitCode = new Promise<number | null>((resolve) => main.on('exit', (code) => resolve(code)));
    main.kill('SIGTERM');
    expect([await exitCode, isAlive(childPid)]).toEqual([0, false]);
  });
});
