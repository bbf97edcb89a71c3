import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A registry started as in production (`tb registry`) for a benchmark, and how to stop it. */
export interface RegistryProcess {
  baseUrl: string;
  /** The registry's process id (its RSS, for the benchmarks that watch it). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Runs `tb registry` in a process of its own on a free loopback port over `dataDir` (its SQLite file, unless
 * `env` names another DATABASE_URL), with the rate limits out of the way, and resolves once it is ready.
 */
export async function startRegistryProcess(options: {
  dataDir: string;
  secret: string;
  workers?: string;
  env?: Record<string, string>;
  /** The compiled `tb` to run; the one beside this benchmark unless set. */
  main?: string;
  /** Whether the registry inherits this process's environment (default true); without it, only PATH. */
  inheritEnv?: boolean;
  /**
   * Runs the registry under `node --cpu-prof` writing into this directory. Its profile is written when it exits
   * of itself, so `stop` then asks with SIGUSR2 (exit 0 at once) instead of SIGTERM (Nest closes the app and raises
   * the signal again, which ends the process before V8 writes the profile).
   */
  cpuProfileDir?: string;
}): Promise<RegistryProcess> {
  const main = options.main ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'main.js');
  const profile = options.cpuProfileDir
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${options.cpuProfileDir}`,
        '--import',
        'data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))',
      ]
    : [];
  const args = [
    ...profile,
    main,
    'registry',
    '--port',
    '0',
    '--data-dir',
    options.dataDir,
    '--workers',
    options.workers ?? '1',
  ];
  const child = spawn(process.execPath, args, {
    env: {
      ...(options.inheritEnv === false ? { PATH: process.env.PATH ?? '' } : process.env),
      PLATFORM_JWT_SECRET: options.secret,
      HOST: '127.0.0.1',
      RATE_LIMIT_ANON_PER_HOUR: '100000000',
      RATE_LIMIT_AUTH_PER_HOUR: '100000000',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /Registry ready at (http:\/\/[^/\s]+)/.exec(output);
      if (ready) resolve(ready[1]);
    });
    child.once('exit', (code) => reject(new Error(`the registry exited with ${code}: ${output}`)));
  });
  child.stdout.resume();
  return {
    baseUrl,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(options.cpuProfileDir ? 'SIGUSR2' : 'SIGTERM');
      }),
  };
}
