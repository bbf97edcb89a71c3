/*
 * The two programs of a Python sandbox process, sent as their source text (`Function.prototype.toString`),
 * so each must be self-contained: it may use nothing from this module's scope, only its parameters and what
 * it imports itself.
 *
 * - `sandboxProgram` is the whole program of the process (`node … --input-type=module -e "(source)()"`). Its
 *   stdin brings, as length-prefixed frames, the settings, pyodide's loader and runtime, the WebAssembly
 *   module, the standard library and the lock file (the process may read no file: it runs under Node's
 *   permission model with no grant), then the one job. fd 3 and fd 4 carry the code's stdout and stderr,
 *   fd 5 the status lines `ready` and `exit <code>`.
 * - `sandboxRealm` runs inside a fresh `vm` context (another JavaScript realm) in that process and is where
 *   CPython, compiled to WebAssembly, lives. The realm has JavaScript's built-in objects and nothing of
 *   Node: no `process`, `require`, `import()`, file system, network or timers of its own. What it may do
 *   outside is the handful of functions `host` lends it, each taking and returning only strings, numbers
 *   and the realm's own byte arrays, and none ever throwing: an object of the outer realm reaching the
 *   code (a function, an error) would give it the outer realm's `Function` and with it Node.
 */

/** The first frame of a sandbox process's stdin. */
export interface SandboxSettings {
  /** The source of `sandboxRealm`. */
  realm: string;
}

/** The last frame: the code to run and its working directory in the in-memory file system. */
export interface SandboxJob {
  code: string;
  cwd: string;
}

/** What the realm may call outside itself. Every function returns a primitive and never throws. */
export interface SandboxRealmHost {
  /** Writes a string or a byte array of the realm to fd 2 (diagnostics), 3 (stdout) or 4 (stderr). */
  write(fd: number, data: unknown): number;
  /** The size of a file of the pyodide distribution, or -1. */
  fileSize(name: string): number;
  /** Copies that file into a byte array of the realm; false when it cannot. */
  copyFile(name: string, target: unknown): boolean;
  /** Fills a byte array of the realm with random bytes from the operating system. */
  random(target: unknown): boolean;
  now(): number;
  /** Calls `fire` after `ms` milliseconds; returns the timer's number. */
  setTimer(ms: number, fire: () => void): number;
  clearTimer(id: number): void;
  /** Decodes a byte array of the realm; null when the bytes or the encoding are not valid. */
  decode(bytes: unknown, encoding: string, fatal: boolean, ignoreBOM: boolean): string | null;
}

/** What `sandboxRealm` returns: start pyodide, then run one piece of code. */
export interface SandboxRealm {
  start(lockFile: string): Promise<void>;
  /** Runs `code` as `__main__` in `cwd`; the exit status (0, 1 for an uncaught exception, or `sys.exit`'s). */
  run(code: string, cwd: string): number;
}

/* eslint-disable @typescript-eslint/no-unsafe-function-type */

/** Runs inside the sandbox's realm: installs the few globals pyodide needs and returns the realm's API. */
export function sandboxRealm(host: SandboxRealmHost): SandboxRealm {
  'use strict';
  const { write, fileSize, copyFile, random, now, setTimer, clearTimer, decode } = host;
  const realm = globalThis as unknown as Record<string, unknown>;
  // Where pyodide's console messages go: diagnostics while it starts, the code's stderr once it runs.
  let consoleFd = 2;
  const text = (values: unknown[]) => values.map((value) => String(value)).join(' ') + '\n';
  const consoleObject = {
    log: (...values: unknown[]) => void write(consoleFd, text(values)),
    info: (...values: unknown[]) => void write(consoleFd, text(values)),
    debug: () => undefined,
    warn: (...values: unknown[]) => void write(consoleFd, text(values)),
    error: (...values: unknown[]) => void write(consoleFd, text(values)),
  };

  class SandboxTextDecoder {
    readonly encoding: string;
    readonly fatal: boolean;
    readonly ignoreBOM: boolean;
    constructor(encoding: unknown = 'utf-8', options: { fatal?: unknown; ignoreBOM?: unknown } = {}) {
      this.encoding = String(encoding).toLowerCase();
      this.fatal = Boolean(options?.fatal);
      this.ignoreBOM = Boolean(options?.ignoreBOM);
    }
    decode(input?: unknown): string {
      if (input === undefined) return '';
      const decoded = decode(input, this.encoding, this.fatal, this.ignoreBOM);
      if (typeof decoded !== 'string') throw new TypeError(`cannot decode these bytes as ${this.encoding}`);
      return decoded;
    }
  }

  class SandboxTextEncoder {
    get encoding(): string {
      return 'utf-8';
    }
    encode(input: unknown = ''): Uint8Array {
      const source = String(input);
      const bytes = new Uint8Array(source.length * 3);
      return bytes.slice(0, this.encodeInto(source, bytes).written);
    }
    encodeInto(input: unknown, target: Uint8Array): { read: number; written: number } {
      const source = String(input);
      let read = 0;
      let written = 0;
      while (read < source.length) {
        let code = source.codePointAt(read)!;
        const units = code > 0xffff ? 2 : 1;
        if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd; // a lone surrogate
        const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
        if (written + size > target.length) break;
        if (size === 1) target[written++] = code;
        else {
          const lead = [0, 0, 0xc0, 0xe0, 0xf0][size];
          target[written++] = lead | (code >> (6 * (size - 1)));
          for (let shift = 6 * (size - 2); shift >= 0; shift -= 6) target[written++] = 0x80 | ((code >> shift) & 0x3f);
        }
        read += units;
      }
      return { read, written };
    }
  }

  const readFile = (path: unknown): ArrayBuffer => {
    const name = String(path).split('/').pop() ?? '';
    const size = fileSize(name);
    if (size < 0) throw new Error(`No such file in the sandbox: ${String(path)}`);
    const buffer = new ArrayBuffer(size);
    if (!copyFile(name, new Uint8Array(buffer))) throw new Error(`Could not read ${name}`);
    return buffer;
  };

  // pyodide's "shell" environment (read/load/readbuffer) reads the distribution through `readbuffer`; the
  // WorkerGlobalScope marker makes Emscripten draw randomness from `crypto.getRandomValues`.
  Object.assign(realm, {
    WorkerGlobalScope: function WorkerGlobalScope() {},
    read: (path: unknown) => {
      throw new Error(`No file system in the sandbox: ${String(path)}`);
    },
    load: () => {
      throw new Error('No scripts in the sandbox');
    },
    readbuffer: readFile,
    console: consoleObject,
    TextDecoder: SandboxTextDecoder,
    TextEncoder: SandboxTextEncoder,
    performance: { now: () => now() },
    crypto: {
      getRandomValues<T extends ArrayBufferView>(array: T): T {
        if (!random(array)) throw new TypeError('getRandomValues needs an integer typed array');
        return array;
      },
    },
    setTimeout: (callback: unknown, ms?: unknown) =>
      setTimer(Number(ms) || 0, () => {
        if (typeof callback === 'function') (callback as Function)();
      }),
    clearTimeout: (id: unknown) => clearTimer(Number(id)),
  });

  let pyodide: any;
  let runCode: any;

  return {
    async start(lockFile: string): Promise<void> {
      pyodide = await (realm.loadPyodide as Function)({
        indexURL: '/pyodide/',
        createPyodideModule: realm._createPyodideModule,
        lockFileContents: lockFile,
        env: { HOME: '/home/pyodide' },
        stdout: (line: string) => void write(3, `${line}\n`),
        stderr: (line: string) => void write(4, `${line}\n`),
      });
      // Nothing more is loaded: packages outside the standard library are simply not there.
      // (`var`s of a script cannot be deleted from the global object, only emptied.)
      for (const name of ['read', 'load', 'readbuffer', 'loadPyodide', '_createPyodideModule'])
        if (!Reflect.deleteProperty(realm, name)) realm[name] = undefined;
      pyodide.setStdin({ stdin: () => undefined }); // an empty stdin: input() raises EOFError
      pyodide.setStdout({ write: (bytes: Uint8Array) => (write(3, bytes), bytes.length) });
      pyodide.setStderr({ write: (bytes: Uint8Array) => (write(4, bytes), bytes.length) });
      runCode = pyodide.runPython(
        [
          'def run(code, cwd):',
          '    import os, sys, traceback',
          '    os.makedirs(cwd, exist_ok=True)',
          '    os.chdir(cwd)',
          "    os.environ['HOME'] = cwd",
          '    import __main__',
          '    try:',
          "        exec(compile(code, '<python_execute>', 'exec'), __main__.__dict__)",
          '        return 0',
          '    except SystemExit as stop:',
          '        if stop.code is None:',
          '            return 0',
          '        if isinstance(stop.code, int):',
          '            return stop.code & 0xFF',
          '        print(stop.code, file=sys.stderr)',
          '        return 1',
          '    except BaseException as error:',
          '        traceback.print_exception(type(error), error, error.__traceback__.tb_next)',
          '        return 1',
          '    finally:',
          '        for stream in (sys.stdout, sys.stderr):',
          '            try:',
          '                stream.flush()',
          '            except BaseException:',
          '                pass',
          'run',
        ].join('\n'),
        { globals: pyodide.toPy({}) },
      );
      consoleFd = 4;
    },
    run(code: string, cwd: string): number {
      try {
        const status = runCode(code, cwd);
        return typeof status === 'number' ? status : 1;
      } catch (error) {
        write(4, `python_execute: the interpreter stopped: ${String((error as Error)?.message ?? error)}\n`);
        return 1;
      }
    },
  };
}

/** The program of a sandbox process (see the top of this file). */
export async function sandboxProgram(): Promise<void> {
  'use strict';
  const { writeSync } = await import('node:fs');
  const { createContext, runInContext } = await import('node:vm');
  const { randomFillSync } = await import('node:crypto');
  const { isUint8Array, isArrayBufferView } = (await import('node:util')).types;

  const status = (line: string) => {
    try {
      writeSync(5, `${line}\n`);
    } catch {
      process.exit(1); // the parent is gone
    }
  };

  // stdin: frames of a 4-byte big-endian length and that many bytes.
  const frames: Buffer[] = [];
  const waiting: Array<(frame: Buffer | null) => void> = [];
  let pending: Buffer = Buffer.alloc(0);
  let ended = false;
  process.stdin.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
      const length = pending.readUInt32BE(0);
      const frame = pending.subarray(4, 4 + length);
      pending = pending.subarray(4 + length);
      const next = waiting.shift();
      if (next) next(frame);
      else frames.push(frame);
    }
  });
  process.stdin.on('end', () => {
    ended = true;
    for (const next of waiting.splice(0)) next(null);
  });
  const nextFrame = () =>
    new Promise<Buffer>((resolve) => {
      const frame = frames.shift();
      if (frame) return resolve(frame);
      // Without its job (the parent went away or gave up on it) the process has nothing to do.
      if (ended) process.exit(0);
      waiting.push((next) => (next ? resolve(next) : process.exit(0)));
    });

  const settings = JSON.parse((await nextFrame()).toString('utf8')) as SandboxSettings;
  const loader = (await nextFrame()).toString('utf8');
  const runtime = (await nextFrame()).toString('utf8');
  let files: Map<string, Buffer> | null = new Map([
    ['pyodide.asm.wasm', await nextFrame()],
    ['python_stdlib.zip', await nextFrame()],
  ]);
  const lockFile = (await nextFrame()).toString('utf8');

  const timers = new Map<number, NodeJS.Timeout>();
  let nextTimer = 1;
  const host = {
    write(fd: number, data: unknown): number {
      try {
        if (fd !== 2 && fd !== 3 && fd !== 4) return -1;
        if (typeof data === 'string') return writeSync(fd, data);
        if (isUint8Array(data)) return writeSync(fd, data);
        return -1;
      } catch {
        return -1;
      }
    },
    fileSize(name: string): number {
      return typeof name === 'string' ? (files?.get(name)?.length ?? -1) : -1;
    },
    copyFile(name: string, target: unknown): boolean {
      try {
        const file = typeof name === 'string' ? files?.get(name) : undefined;
        if (!file || !isUint8Array(target) || target.length !== file.length) return false;
        target.set(file);
        return true;
      } catch {
        return false;
      }
    },
    random(target: unknown): boolean {
      try {
        if (!isArrayBufferView(target)) return false;
        randomFillSync(target);
        return true;
      } catch {
        return false;
      }
    },
    now: (): number => performance.now(),
    setTimer(ms: number, fire: () => void): number {
      const id = nextTimer++;
      const delay = typeof ms === 'number' && ms > 0 ? Math.min(ms, 2 ** 31 - 1) : 0;
      timers.set(
        id,
        setTimeout(() => {
          timers.delete(id);
          try {
            fire();
          } catch {
            // an error of the realm's own timer callback stays there
          }
        }, delay),
      );
      return id;
    },
    clearTimer(id: number): void {
      clearTimeout(timers.get(id));
      timers.delete(id);
    },
    decode(bytes: unknown, encoding: string, fatal: boolean, ignoreBOM: boolean): string | null {
      try {
        if (!isArrayBufferView(bytes) || typeof encoding !== 'string') return null;
        return new TextDecoder(encoding, { fatal: fatal === true, ignoreBOM: ignoreBOM === true }).decode(bytes);
      } catch {
        return null;
      }
    },
  };

  // A null-prototype context object: the realm's global then inherits nothing from this realm's Object.
  const context = createContext(Object.create(null), {
    name: 'python_execute',
    codeGeneration: { strings: false, wasm: true },
  });
  const realm = (runInContext(`(${settings.realm})`, context) as (host: unknown) => SandboxRealm)(host);
  runInContext(loader, context, { filename: 'pyodide.js' });
  runInContext(runtime, context, { filename: 'pyodide.asm.js' });
  await realm.start(lockFile);
  files = null;
  status('ready');

  const job = JSON.parse((await nextFrame()).toString('utf8')) as SandboxJob;
  let exitCode = 1;
  try {
    const result = realm.run(job.code, job.cwd);
    if (typeof result === 'number' && Number.isInteger(result)) exitCode = result;
  } catch {
    // the realm's API is ours, but what it returns after the code ran is the code's: trust only a number
  }
  status(`exit ${exitCode}`);
  process.exit(0);
}
