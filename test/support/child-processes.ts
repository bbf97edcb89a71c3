import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { transformFile } from '@swc/core';

/**
 * Compiles the platform's sources (`src/`, no specs) with the SWC options the tests use into
 * `<outDir>/src`, with `node_modules` linked beside it, so a separate Node process can run `tb`
 * (`node <outDir>/src/main.js …`) on exactly the code under test. Takes a second or two.
 */
export async function compileSourcesFor(outDir: string, root = resolve('.')): Promise<string> {
  const files: string[] = [];
  const walk = async (directory: string) => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts'))
        files.push(path);
    }
  };
  await walk(join(root, 'src'));
  await Promise.all(
    files.map(async (file) => {
      const { code } = await transformFile(file, {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'es6' },
        sourceMaps: false,
      });
      const target = join(outDir, relative(root, file)).replace(/\.ts$/, '.js');
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, code);
    }),
  );
  await writeFile(join(outDir, 'package.json'), JSON.stringify({ type: 'module', version: '0.1.0' }));
  await symlink(join(root, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  // The pages and shared assets services serve (src/common/web-assets.ts finds them beside package.json).
  await symlink(join(root, 'web'), join(outDir, 'web'), 'dir');
  return join(outDir, 'src', 'main.js');
}

/** A `tb` process started by a test: its output so far, and a way to wait for a line and to stop it. */
export interface TbProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line `match` accepts (or rejects when the process exits first). */
  line(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startTb(mainPath: string, argv: string[], env: Record<string, string>): TbProcess {
  const child = spawn(process.execPath, [mainPath, ...argv], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    line(match, timeoutMs = 20_000) {
      return new Promise((resolveLine, reject) => {
        const check = () => {
          const found = out.split('\n').find((each) => match(each));
          if (found !== undefined) {
            done();
            resolveLine(found);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching line within ${timeoutMs} ms; stdout: ${out}; stderr: ${err}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then((code) => {
          if (listeners.has(check)) {
            done();
            reject(new Error(`tb exited (${code}) before the line appeared; stdout: ${out}; stderr: ${err}`));
          }
        });
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `tb` to completion. */
export async function runTb(
  mainPath: string,
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tb = startTb(mainPath, argv, env);
  const code = await tb.exited;
  return { code, stdout: tb.stdout(), stderr: tb.stderr() };
}

/** Every process below `pid` (Linux /proc), so the test can check by pid that none outlives `tb up`. */
export async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (!text) continue;
    // "pid (comm) state ppid …": comm may hold spaces, so read after the last ')'.
    const ppid = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}
