import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { sandboxProgram, sandboxRealm, type SandboxJob, type SandboxSettings } from './sandbox/sandbox-program.js';
import { WASM_PAGE_BYTES, withMemoryMaximum } from './sandbox/wasm-memory-maximum.js';

export interface PythonRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  /** The process passed its memory cap and was stopped (Python's own MemoryError is an ordinary exit 1). */
  memoryExceeded: boolean;
  durationMs: number;
}

export interface PythonRunnerOptions {
  /** The pyodide package's directory (`findPythonSandbox()`). */
  pyodideDirectory: string;
  /** MiB the code may use: the interpreter's WebAssembly memory, and what the process may grow by. */
  memoryMb: number;
  /** Bytes kept of stdout and stderr together; the process is stopped once the code writes more. */
  maxOutputBytes: number;
  /** The longest a call may run (MCP_PYTHON_TIMEOUT_SECONDS); a call may ask for less. */
  maxTimeoutMs: number;
  /** Runs at the same time; more wait for a free one up to their own timeout. */
  concurrency: number;
  /** How long a sandbox may take to start (load the interpreter) before the call fails. */
  startupTimeoutMs?: number;
  /** Told when a sandbox fails outside the code's control (it could not start, it crashed). */
  onProblem?: (message: string) => void;
}

/** The files of the pinned pyodide build the sandbox loads. */
const PYODIDE_FILES = ['pyodide.js', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];

/**
 * The directory of the `pyodide` package (CPython compiled to WebAssembly) when it is installed with every
 * file the sandbox loads, else null: then `python_execute` is not offered, and code never runs unsandboxed.
 */
export function findPythonSandbox(): string | null {
  try {
    const directory = dirname(createRequire(import.meta.url).resolve('pyodide/package.json'));
    return PYODIDE_FILES.every((name) => existsSync(join(directory, name))) ? directory : null;
  } catch {
    return null;
  }
}

/** pyodide's files as the sandbox process receives them (its stdin frames but the job), prepared once per runner. */
interface PreparedFiles {
  frames: Buffer[];
}

/** Index of the standard library among the frames (after the settings, loader, runtime and module). */
const STDLIB_FRAME = 4;

/**
 * pyodide ships its standard library as sources, so every interpreter would compile what it imports at
 * start (about 2/3 of the start-up's CPU time). This runs once, in a sandbox, before any caller's code:
 * it writes the library back with each module's bytecode beside its source (hash-based, unchecked: the
 * archive never changes), which `zipimport` then loads as it is.
 */
const PRECOMPILE_STANDARD_LIBRARY = [
  'import importlib.util, io, marshal, sys, zipfile',
  "archive = next(path for path in sys.path if path.endswith('.zip'))",
  'buffer = io.BytesIO()',
  'with zipfile.ZipFile(archive) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:',
  '    for entry in source.infolist():',
  '        data = source.read(entry)',
  '        target.writestr(entry, data)',
  "        if not entry.filename.endswith('.py'):",
  '            continue',
  '        try:',
  "            code = compile(data, f'{archive}/{entry.filename}', 'exec', dont_inherit=True)",
  '        except SyntaxError:',
  '            continue',
  "        header = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, 'little') + importlib.util.source_hash(data)",
  "        target.writestr(entry.filename[:-3] + '.pyc', header + marshal.dumps(code))",
  'sys.stdout.buffer.write(buffer.getvalue())',
].join('\n');

const STATUS_FD = 5;
const POLL_MEMORY_MS = 50;
/** Where the code runs: a fresh directory of the in-memory file system, named as the temporary one was. */
const workingDirectory = () => `/tmp/tb-mcp-python-${Math.random().toString(16).slice(2, 10)}`;

/**
 * Runs Python code in a sandbox: CPython compiled to WebAssembly (pyodide) inside an empty JavaScript realm
 * of its own Node process, one process per call, started ahead so a call does not wait for the interpreter
 * to load.
 *
 * What a piece of code can reach is what the realm lends it: an in-memory file system, stdout and stderr,
 * random bytes and a clock. It has no host file system, no network, no processes, no environment; the
 * process itself runs with an empty environment under Node's permission model with no grant (it may not
 * read or write a file, start a process or a worker, load an addon), so even a way out of the realm finds
 * nothing to take. Each call is bounded by wall time (the process is killed), by memory (the interpreter's
 * WebAssembly memory has a hard maximum; the process's resident memory is watched on Linux and its
 * JavaScript heap capped) and by output; its CPU time is capped too, so a process whose server died cannot
 * spin for ever.
 */
export class PythonRunner {
  private files: Promise<PreparedFiles> | undefined;
  private spare: SandboxProcess | undefined;
  private readonly running = new Set<SandboxProcess>();
  private readonly queue: Array<() => void> = [];
  private busy = 0;
  private closed = false;

  constructor(private readonly options: PythonRunnerOptions) {}

  /** Starts the spare sandbox, so the first call finds its interpreter loaded. */
  warmUp(): void {
    if (!this.closed && !this.spare) this.spare = this.startProcess();
  }

  async run(code: string, timeoutMs: number): Promise<PythonRun> {
    const started = Date.now();
    if (this.closed) throw new Error('the Python sandbox is shut down');
    if (!(await this.acquire(timeoutMs)))
      return {
        ...emptyRun(Date.now() - started),
        stderr: `python_execute: ${this.options.concurrency} calls are running; none finished within the ${timeoutMs / 1000} s timeout`,
        timedOut: true,
      };
    try {
      const sandbox = this.takeSpare();
      this.running.add(sandbox);
      try {
        await sandbox.ready;
        const run = await sandbox.run({ code, cwd: workingDirectory() }, timeoutMs);
        return {
          ...run,
          stdout: Buffer.concat(run.stdout).toString('utf8'),
          stderr: Buffer.concat(run.stderr).toString('utf8'),
        };
      } finally {
        this.running.delete(sandbox);
        await sandbox.kill();
      }
    } finally {
      this.release();
    }
  }

  /** Interpreters loaded and waiting for a call, loading, and running code (or precompiling the library). */
  sandboxes(): { ready: number; starting: number; running: number } {
    const spare = this.spare && !this.spare.exited ? this.spare : undefined;
    return {
      ready: spare?.isReady ? 1 : 0,
      starting: spare && !spare.isReady ? 1 : 0,
      running: this.running.size,
    };
  }

  /** Stops the spare and every running sandbox and waits for their processes to end. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.running, ...(this.spare ? [this.spare] : [])];
    this.spare = undefined;
    for (const waiter of this.queue.splice(0)) waiter();
    await Promise.all(all.map((sandbox) => sandbox.kill()));
  }

  private takeSpare(): SandboxProcess {
    let sandbox = this.spare;
    this.spare = undefined;
    if (!sandbox || sandbox.exited) sandbox = this.startProcess();
    // Load the next call's interpreter while this one runs.
    this.warmUp();
    return sandbox;
  }

  private startProcess(): SandboxProcess {
    this.files ??= prepareFiles(this.options.pyodideDirectory, this.options.memoryMb).then((files) =>
      this.precompiled(files),
    );
    const sandbox = new SandboxProcess(this.files, this.options);
    sandbox.ready.catch((error: Error) => {
      if (!this.closed) this.options.onProblem?.(`a Python sandbox did not start: ${error.message}`);
      if (this.spare === sandbox) this.spare = undefined;
    });
    return sandbox;
  }

  /** The files with the standard library precompiled (see PRECOMPILE_STANDARD_LIBRARY), or as they were. */
  private async precompiled(files: PreparedFiles): Promise<PreparedFiles> {
    if (this.closed) return files; // closed while the files were read: start nothing that close() cannot see
    const startupMs = this.options.startupTimeoutMs ?? 60_000;
    const sandbox = new SandboxProcess(Promise.resolve(files), { ...this.options, maxOutputBytes: 256 * 1024 * 1024 });
    this.running.add(sandbox);
    try {
      await sandbox.ready;
      const job = { code: PRECOMPILE_STANDARD_LIBRARY, cwd: workingDirectory() };
      const compiled = await sandbox.run(job, startupMs);
      const zip = Buffer.concat(compiled.stdout);
      if (compiled.exitCode !== 0 || zip.readUInt32LE(0) !== 0x04034b50)
        throw new Error(Buffer.concat(compiled.stderr).toString('utf8').trim().slice(-500) || 'no archive');
      const frames = [...files.frames];
      frames[STDLIB_FRAME] = zip;
      return { frames };
    } catch (error) {
      if (!this.closed)
        this.options.onProblem?.(
          `could not precompile the Python standard library (each call's interpreter starts slower): ${(error as Error).message}`,
        );
      return files;
    } finally {
      this.running.delete(sandbox);
      await sandbox.kill();
    }
  }

  private acquire(timeoutMs: number): Promise<boolean> {
    if (this.busy < this.options.concurrency) {
      this.busy += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        if (this.closed) return resolve(false);
        this.busy += 1;
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(waiter), 1);
        resolve(false);
      }, timeoutMs);
      this.queue.push(waiter);
    });
  }

  private release(): void {
    this.busy -= 1;
    this.queue.shift()?.();
  }
}

/** A run as the process reports it: the output as the chunks that came. */
interface SandboxRun extends Omit<PythonRun, 'stdout' | 'stderr'> {
  stdout: Buffer[];
  stderr: Buffer[];
}

/** One sandbox process: loads the interpreter as soon as it starts, then runs one job and ends. */
class SandboxProcess {
  readonly ready: Promise<void>;
  readonly pid: number | undefined;
  exited = false;
  isReady = false;
  private readonly child: ChildProcess;
  private readonly closed: Promise<void>;
  private readonly statusLines: string[] = [];
  private diagnostics = '';
  private onStatus: (() => void) | undefined;

  constructor(
    files: Promise<PreparedFiles>,
    private readonly options: PythonRunnerOptions,
  ) {
    const program = `(${sandboxProgram.toString()})()`;
    const nodeArguments = [
      process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission',
      '--disallow-code-generation-from-strings',
      '--no-warnings',
      `--max-old-space-size=${options.memoryMb}`,
      '--input-type=module',
      '-e',
      program,
    ];
    // The CPU-time limit ends a sandbox whose server died without killing it (the wall-time limit of a call
    // is the server's, below): twice what loading and the longest call may take, all threads counted.
    const cpuSeconds = Math.ceil((2 * ((options.startupTimeoutMs ?? 60_000) + options.maxTimeoutMs)) / 1000);
    const useShell = existsSync('/bin/sh');
    this.child = spawn(
      useShell ? '/bin/sh' : process.execPath,
      useShell
        ? ['-c', 'ulimit -t "$0" && exec "$@"', String(cpuSeconds), process.execPath, ...nodeArguments]
        : nodeArguments,
      { env: {}, stdio: ['pipe', 'ignore', 'pipe', 'pipe', 'pipe', 'pipe'], windowsHide: true },
    );
    this.pid = this.child.pid;
    this.closed = new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.once('error', () => resolve()); // it never started
    });
    this.child.once('exit', () => {
      this.exited = true;
      this.onStatus?.();
    });
    this.child.on('error', (error) => {
      this.diagnostics += `${error.message}\n`;
      this.exited = true;
      this.onStatus?.();
    });
    (this.child.stdio[2] as Readable).on('data', (chunk: Buffer) => {
      if (this.diagnostics.length < 8192) this.diagnostics += chunk.toString('utf8');
    });
    const stdin = this.child.stdio[0] as Writable;
    stdin.on('error', () => undefined); // a process that died is reported by its exit
    let partial = '';
    (this.child.stdio as unknown as Readable[])[STATUS_FD].on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      this.statusLines.push(...lines);
      this.onStatus?.();
    });
    this.ready = this.startUp(files, stdin);
  }

  private async startUp(files: Promise<PreparedFiles>, stdin: Writable): Promise<void> {
    try {
      for (const frame of (await files).frames) writeFrame(stdin, frame);
    } catch (error) {
      await this.kill();
      throw error;
    }
    const limitMs = this.options.startupTimeoutMs ?? 60_000;
    const outcome = await this.waitFor(() => this.statusLines.includes('ready'), limitMs);
    if (outcome === 'done') {
      this.isReady = true;
      return;
    }
    await this.kill();
    throw new Error(
      outcome === 'timeout'
        ? `the interpreter did not load within ${limitMs / 1000} s`
        : `the process ended while loading the interpreter: ${this.diagnostics.trim().slice(0, 500) || 'no message'}`,
    );
  }

  async run(job: SandboxJob, timeoutMs: number): Promise<SandboxRun> {
    const started = Date.now();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let memoryExceeded = false;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      const room = this.options.maxOutputBytes - kept;
      if (room <= 0 || chunk.length > room) {
        if (room > 0) into.push(chunk.subarray(0, room));
        kept = this.options.maxOutputBytes;
        if (!truncated) {
          truncated = true;
          void this.kill();
        }
        return;
      }
      kept += chunk.length;
      into.push(chunk);
    };
    (this.child.stdio[3] as Readable).on('data', collect(out));
    (this.child.stdio[4] as Readable).on('data', collect(err));
    const memory = this.watchMemory(() => {
      memoryExceeded = true;
      void this.kill();
    });
    writeFrame(this.child.stdio[0] as Writable, Buffer.from(JSON.stringify(job)));
    const outcome = await this.waitFor(() => this.exitStatus() !== undefined, timeoutMs);
    clearInterval(memory);
    const timedOut = outcome === 'timeout';
    await this.kill();
    const exitLine = this.exitStatus();
    // A process that ended without its status ran out of memory (V8's heap limit aborts it) or crashed.
    if (exitLine === undefined && !timedOut && !truncated && !memoryExceeded) {
      memoryExceeded = /heap limit|out of memory|Allocation failed/i.test(this.diagnostics);
      if (!memoryExceeded)
        this.options.onProblem?.(`a Python sandbox stopped: ${this.diagnostics.trim().slice(0, 500)}`);
    }
    return {
      stdout: out,
      stderr: err,
      exitCode: timedOut || truncated || memoryExceeded ? null : (exitLine ?? null),
      timedOut,
      truncated,
      memoryExceeded,
      durationMs: Date.now() - started,
    };
  }

  /** Kills the process (if it still runs) and waits until it and its pipes are gone. */
  async kill(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.closed;
  }

  private exitStatus(): number | undefined {
    const line = this.statusLines.find((candidate) => candidate.startsWith('exit '));
    return line === undefined ? undefined : Number(line.slice(5));
  }

  /** Resolves 'done' once `condition` holds, 'exited' when the process ended first, 'timeout' after `ms`. */
  private waitFor(condition: () => boolean, ms: number): Promise<'done' | 'exited' | 'timeout'> {
    return new Promise((resolve) => {
      const check = () => {
        if (condition()) finish('done');
        else if (this.exited) finish('exited');
      };
      const timer = setTimeout(() => finish('timeout'), ms);
      const finish = (outcome: 'done' | 'exited' | 'timeout') => {
        clearTimeout(timer);
        this.onStatus = undefined;
        resolve(outcome);
      };
      this.onStatus = check;
      check();
    });
  }

  /**
   * Linux: stops the process once its resident memory grew by more than the cap since the job began. The
   * interpreter's own memory cannot pass the cap (its WebAssembly maximum); this catches what the code
   * allocates on the JavaScript side through pyodide's bridge (typed arrays, other WebAssembly memories).
   */
  private watchMemory(exceeded: () => void): NodeJS.Timeout | undefined {
    const baseline = residentBytes(this.pid);
    if (baseline === null) return undefined;
    const limit = baseline + this.options.memoryMb * 1024 * 1024;
    const timer = setInterval(() => {
      const resident = residentBytes(this.pid);
      if (resident !== null && resident > limit) {
        clearInterval(timer);
        exceeded();
      }
    }, POLL_MEMORY_MS);
    return timer;
  }
}

/** The resident memory of a process from /proc (Linux), or null. */
function residentBytes(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function writeFrame(stream: Writable, payload: Buffer): void {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length, 0);
  stream.write(length);
  stream.write(payload);
}

function emptyRun(durationMs: number): PythonRun {
  return {
    stdout: '',
    stderr: '',
    exitCode: null,
    timedOut: false,
    truncated: false,
    memoryExceeded: false,
    durationMs,
  };
}

/**
 * Reads the pyodide build once: its runtime, an ES module, becomes a script for the realm (which has no
 * module loader), and its WebAssembly module gets the memory maximum of the cap.
 */
async function prepareFiles(directory: string, memoryMb: number): Promise<PreparedFiles> {
  const read = (name: string) => readFile(join(directory, name));
  const [loader, runtimeModule, wasm, stdlib, lock] = await Promise.all(PYODIDE_FILES.map(read));
  const runtime = runtimeModule
    .toString('utf8')
    .replaceAll('import.meta.url', JSON.stringify('file:///pyodide/pyodide.asm.mjs'))
    .replace(/export\s+default\s+_createPyodideModule\s*;?\s*$/, '');
  if (/\bexport\s+default\b/.test(runtime.slice(-200)) || runtime.includes('import.meta'))
    throw new Error('this pyodide build is not the one the sandbox knows (see package.json for the pinned version)');
  const settings: SandboxSettings = { realm: sandboxRealm.toString() };
  const maxPages = Math.ceil((memoryMb * 1024 * 1024) / WASM_PAGE_BYTES);
  return {
    frames: [
      Buffer.from(JSON.stringify(settings)),
      loader,
      Buffer.from(runtime),
      Buffer.from(withMemoryMaximum(wasm, maxPages)),
      stdlib,
      lock,
    ],
  };
}
