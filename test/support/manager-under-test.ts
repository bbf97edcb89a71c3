import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSourcesFor, runTb, startTb, type TbProcess } from './child-processes.js';
import { freePortRange } from './free-ports.js';
import { TEST_SECRET } from './registry-under-test.js';

export { freePortRange, portFree } from './free-ports.js';

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let compiled: Promise<string> | undefined;
let compiledRoot: string | undefined;

/** The platform compiled once per test file into a temp folder (a real `tb` for child processes). */
export function compiledTb(): Promise<string> {
  compiled ??= (async () => {
    compiledRoot = await mkdtemp(join(tmpdir(), 'tb-build-'));
    return compileSourcesFor(join(compiledRoot, 'build'));
  })();
  return compiled;
}

export interface ManagerUnderTest {
  main: string;
  env: Record<string, string>;
  process: TbProcess;
  api: string;
  secret: string;
  pid: number;
  httpBase: number;
  wsBase: number;
  /** fetch on the admin API with the secret. */
  request(path: string, init?: { method?: string; body?: unknown; secret?: string | null }): Promise<Response>;
  /** The body of a successful admin API call (throws on a non-2xx answer). */
  json<T = any>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
  tb(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** SIGTERM, then waits; `keepData` leaves DATA_DIR for a manager started again on it (`env: { DATA_DIR }`). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/**
 * `tb workers start` as a real child process on free ports and a temp DATA_DIR; resolves once the manager said it
 * is ready (its admin API listens and every initial worker answered /health).
 */
export async function startManager(
  options: {
    httpWorkers?: number;
    httpSlots?: number;
    env?: Record<string, string>;
    args?: string[];
    /** Worker port bases chosen by the caller (an nginx config written beforehand lists them). */
    fixedPorts?: { httpBase: number; wsBase: number };
  } = {},
): Promise<ManagerUnderTest> {
  const main = await compiledTb();
  const root = await mkdtemp(join(tmpdir(), 'tb-manager-'));
  const httpSlots = options.httpSlots ?? 4;
  const httpBase = options.fixedPorts?.httpBase ?? (await freePortRange(httpSlots));
  const wsBase = options.fixedPorts?.wsBase ?? (await freePortRange(2));
  const env: Record<string, string> = {
    PLATFORM_JWT_SECRET: TEST_SECRET,
    DATA_DIR: join(root, 'data'),
    HTTP_WORKERS: String(options.httpWorkers ?? 1),
    HTTP_WORKER_PORT: String(httpBase),
    WS_WORKER_PORT: String(wsBase),
    MANAGER_HTTP_PORT_SLOTS: String(httpSlots),
    MANAGER_WS_PORT_SLOTS: '2',
    MANAGER_PORT: '0',
    MANAGER_HEALTH_INTERVAL_SECONDS: '0.3',
    MANAGER_RESTART_DELAY_SECONDS: '0.3',
    MANAGER_ROLLING_WAIT_SECONDS: '0.3',
    MANAGER_METRICS_INTERVAL_SECONDS: '0.5',
    DRAIN_TIMEOUT_SECONDS: '3',
    LOG_FORMAT: 'json',
    NGINX_BIN: '/nonexistent/nginx',
    ...options.env,
  };
  const tbProcess = startTb(main, ['workers', 'start', ...(options.args ?? [])], env);
  await tbProcess.line((line) => line.startsWith('Worker manager ready'), 90_000);
  const state = JSON.parse(await readFile(join(env.DATA_DIR, 'manager.json'), 'utf8')) as {
    api: string;
    secret: string;
    pid: number;
  };
  const request: ManagerUnderTest['request'] = (path, init = {}) =>
    fetch(`${state.api}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: {
        ...(init.secret === null ? {} : { 'x-cluster-secret': init.secret ?? state.secret }),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        // What the CLI and the dashboard send: state-changing calls must show they come from a script.
        'x-requested-with': 'tb-test',
      },
      body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
    });
  return {
    main,
    env,
    process: tbProcess,
    api: state.api,
    secret: state.secret,
    pid: state.pid,
    httpBase,
    wsBase,
    request,
    async json<T = any>(path: string, init?: { method?: string; body?: unknown }): Promise<T> {
      const response = await request(path, init);
      const body = (await response.json()) as T;
      if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
      return body;
    },
    tb: (argv) => runTb(main, argv, env),
    async stop({ keepData = false } = {}) {
      if (tbProcess.child.exitCode === null) tbProcess.child.kill('SIGTERM');
      const timer = setTimeout(() => tbProcess.child.kill('SIGKILL'), 20_000);
      await tbProcess.exited;
      clearTimeout(timer);
      if (!keepData) await rm(root, { recursive: true, force: true });
    },
  };
}
