import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PythonRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
}

export interface PythonLimits {
  timeoutMs: number;
  /** Bytes kept of stdout and stderr together; the process is killed once it writes more. */
  maxOutputBytes: number;
}

/** The `python3` on PATH, or null when there is none (then `python_execute` is not offered). */
export function findPython(command = 'python3'): string | null {
  const probe = spawnSync(command, ['--version'], { stdio: 'ignore', timeout: 5_000 });
  return probe.status === 0 ? command : null;
}

/**
 * Runs `code` in a separate `python3 -I` process (isolated mode: no user site, no PYTHON* variables) in a
 * fresh temporary directory that is removed afterwards, with an environment of PATH, HOME=that directory and
 * a UTF-8 locale only: nothing of the server's environment (keys, database URLs) is inherited.
 */
export async function runPython(python: string, code: string, limits: PythonLimits): Promise<PythonRun> {
  const workDir = await mkdtemp(join(tmpdir(), 'tb-mcp-python-'));
  const started = Date.now();
  try {
    return await new Promise<PythonRun>((resolve, reject) => {
      const child = spawn(python, ['-I', '-'], {
        cwd: workDir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workDir, LANG: 'C.UTF-8', PYTHONIOENCODING: 'utf-8' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      let timedOut = false;
      const collect = (into: Buffer[]) => (chunk: Buffer) => {
        const room = limits.maxOutputBytes - kept;
        if (room <= 0 || chunk.length > room) {
          if (room > 0) into.push(chunk.subarray(0, room));
          kept = limits.maxOutputBytes;
          if (!truncated) {
            truncated = true;
            child.kill('SIGKILL');
          }
          return;
        }
        kept += chunk.length;
        into.push(chunk);
      };
      child.stdout.on('data', collect(out));
      child.stderr.on('data', collect(err));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, limits.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (exitCode) => {
        clearTimeout(timer);
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          exitCode,
          timedOut,
          truncated,
          durationMs: Date.now() - started,
        });
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(code);
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
