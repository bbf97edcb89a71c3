import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortRange } from './free-ports.js';

/**
 * The Groonga server binary the dedicated-engine suites run against (Debian's groonga-bin). CI sets
 * TEST_GROONGA_BIN (and installs the package when missing); where it is unset, those suites are not
 * defined, as the MySQL ones are not without TEST_MYSQL_URL. A configured binary that cannot start fails.
 */
export const GROONGA_BIN = process.env.TEST_GROONGA_BIN || null;

export interface GroongaUnderTest {
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its database. */
  stop(): Promise<void>;
}

/** A real Groonga HTTP server on a new database in a temp directory, on a free loopback port. */
export async function startGroonga(binary = GROONGA_BIN ?? 'groonga'): Promise<GroongaUnderTest> {
  const directory = await mkdtemp(join(tmpdir(), 'tb-groonga-'));
  const port = await freePortRange(1);
  const child: ChildProcess = spawn(
    binary,
    ['-n', '-s', '--protocol', 'http', '--bind-address', '127.0.0.1', '-p', String(port), join(directory, 'db')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(directory, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`groonga exited with ${child.exitCode}: ${stderr}`);
    }
    try {
      if ((await fetch(`${url}/d/status`)).ok) return { url, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`groonga did not answer on ${url} within 15 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
