import { execFile } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runTb } from './child-processes.js';
import { freePortRange } from './free-ports.js';
import { compiledTb, startManager, type ManagerUnderTest } from './manager-under-test.js';
import { TEST_SECRET } from './registry-under-test.js';

const exec = promisify(execFile);
export const NGINX_BIN = process.env.NGINX_BIN_FOR_TESTS ?? '/usr/sbin/nginx';

/**
 * A real nginx in a temp prefix (`nginx -p DIR -c DIR/conf/nginx.conf`), unprivileged paths, on a free port. The
 * main config is a bare http block: `tb workers nginx-init` adds the include of the generated sites.
 */
export interface NginxUnderTest {
  prefix: string;
  confDir: string;
  port: number;
  url: string;
  /** Environment for `tb` so its nginx commands and the manager act on this nginx. */
  env: Record<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  errorLog(): Promise<string>;
  /** The master's worker processes (Linux /proc): a reload replaces every one, so equal lists mean no reload. */
  workerPids(): Promise<number[]>;
}

export async function prepareNginx(): Promise<NginxUnderTest> {
  const prefix = await mkdtemp(join(tmpdir(), 'tb-nginx-'));
  const confDir = join(prefix, 'conf');
  for (const dir of [confDir, join(prefix, 'logs'), join(prefix, 'tmp')]) await mkdir(dir, { recursive: true });
  const port = await freePortRange(1);
  const user = process.getuid?.() === 0 ? 'user root root;\n' : '';
  await writeFile(
    join(confDir, 'nginx.conf'),
    `${user}worker_processes 1;
error_log ${prefix}/logs/error.log warn;
pid ${prefix}/nginx.pid;
events { worker_connections 1024; }
http {
    access_log ${prefix}/logs/access.log;
    client_body_temp_path ${prefix}/tmp/client;
    proxy_temp_path ${prefix}/tmp/proxy;
    fastcgi_temp_path ${prefix}/tmp/fastcgi;
    uwsgi_temp_path ${prefix}/tmp/uwsgi;
    scgi_temp_path ${prefix}/tmp/scgi;
}
`,
  );
  const args = ['-p', prefix, '-c', join(confDir, 'nginx.conf')];
  return {
    prefix,
    confDir,
    port,
    url: `http://127.0.0.1:${port}`,
    env: {
      NGINX_BIN,
      NGINX_PREFIX: prefix,
      NGINX_CONF_DIR: confDir,
      NGINX_LISTEN_PORT: String(port),
      NGINX_SITE_NAME: 'toolbox',
    },
    async start() {
      await exec(NGINX_BIN, args);
    },
    async stop() {
      try {
        const pid = Number((await readFile(join(prefix, 'nginx.pid'), 'utf8')).trim());
        // Never 0 or NaN: kill(0) would signal this whole process group.
        if (!Number.isInteger(pid) || pid <= 1) throw new Error('no nginx pid');
        process.kill(pid, 'SIGQUIT');
        for (let i = 0; i < 100; i++) {
          try {
            process.kill(pid, 0);
            await new Promise((resolve) => setTimeout(resolve, 50));
          } catch {
            break;
          }
        }
      } catch {
        // not running
      }
      await rm(prefix, { recursive: true, force: true });
    },
    async workerPids() {
      const master = Number((await readFile(join(prefix, 'nginx.pid'), 'utf8')).trim());
      const children = await readFile(`/proc/${master}/task/${master}/children`, 'utf8');
      return children.split(/\s+/).filter(Boolean).map(Number).sort();
    },
    errorLog: async () => {
      const logs = await readdir(join(prefix, 'logs')).catch(() => []);
      const texts = await Promise.all(
        logs.filter((name) => name.endsWith('error.log')).map((name) => readFile(join(prefix, 'logs', name), 'utf8')),
      );
      return texts.join('');
    },
  };
}

/** One request on a keep-alive agent: status and body; a network error says whether the connection was reused. */
function send(agent: Agent, url: URL, method: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        agent,
        headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.once('error', reject);
      },
    );
    req.once('error', (error: NodeJS.ErrnoException) =>
      reject(Object.assign(error, { reusedSocket: req.reusedSocket })),
    );
    req.end(body);
  });
}

/** Failures kept word for word; past this many only their kinds are counted. */
const FAILURES_KEPT = 20;

/**
 * A steady client: `concurrency` loops on keep-alive connections sending GET /api/ping and POST /api/client-logs
 * through nginx until stopped. Nothing is resent: every network error (a reset, EPIPE…) and every answer that is
 * not 2xx is a failure, counted by kind (`GET ECONNRESET (reused connection)`, `POST 502`) in `byKind`, the first
 * ones kept whole in `failures`.
 */
export function steadyClient(baseUrl: string, concurrency = 4) {
  let running = true;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const outcome = { ok: 0, failed: 0, byKind: {} as Record<string, number>, failures: [] as string[] };
  const fail = (kind: string, detail: string) => {
    outcome.failed++;
    outcome.byKind[kind] = (outcome.byKind[kind] ?? 0) + 1;
    if (outcome.failures.length < FAILURES_KEPT) outcome.failures.push(`${kind}${detail ? ` ${detail}` : ''}`);
  };
  const loop = async (index: number) => {
    let n = 0;
    while (running) {
      n++;
      const post = (n + index) % 2 === 0;
      const method = post ? 'POST' : 'GET';
      const url = new URL(post ? '/api/client-logs' : '/api/ping', baseUrl);
      const body = post ? JSON.stringify([{ level: 'debug', message: `steady ${index}/${n}` }]) : undefined;
      try {
        const response = await send(agent, url, method, body);
        if (response.status >= 200 && response.status < 300) outcome.ok++;
        else fail(`${method} ${response.status}`, response.body.slice(0, 200));
      } catch (error) {
        const { code, message, reusedSocket } = error as NodeJS.ErrnoException & { reusedSocket?: boolean };
        fail(`${method} ${code ?? 'error'} (${reusedSocket ? 'reused' : 'new'} connection)`, code ? '' : message);
      }
    }
  };
  const loops = Array.from({ length: concurrency }, (_, index) => loop(index));
  return {
    outcome,
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return outcome;
    },
  };
}

/**
 * A real nginx set up by `tb workers nginx-init` and `nginx-config` (with `--write-htpasswd` when
 * ADMIN_UI_PASSWORD is in `env`) for a manager's free ports, started, then that manager on those ports.
 */
export async function startManagerBehindNginx(options: {
  env: Record<string, string>;
  httpWorkers?: number;
  httpSlots?: number;
}): Promise<{ nginx: NginxUnderTest; manager: ManagerUnderTest }> {
  const nginx = await prepareNginx();
  const main = await compiledTb();
  const httpSlots = options.httpSlots ?? 2;
  const [managerPort, httpBase, wsBase] = [
    await freePortRange(1),
    await freePortRange(httpSlots),
    await freePortRange(2),
  ];
  const env: Record<string, string> = {
    PLATFORM_JWT_SECRET: TEST_SECRET,
    DATA_DIR: join(nginx.prefix, 'data'),
    MANAGER_PORT: String(managerPort),
    HTTP_WORKER_PORT: String(httpBase),
    WS_WORKER_PORT: String(wsBase),
    MANAGER_HTTP_PORT_SLOTS: String(httpSlots),
    MANAGER_WS_PORT_SLOTS: '2',
    ...nginx.env,
    ...options.env,
  };
  const htpasswd = env.ADMIN_UI_PASSWORD ? ['--write-htpasswd'] : [];
  for (const argv of [
    ['workers', 'nginx-init'],
    ['workers', 'nginx-config', ...htpasswd],
  ]) {
    const result = await runTb(main, argv, env);
    if (result.code !== 0) throw new Error(`tb ${argv.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  }
  await nginx.start();
  const manager = await startManager({
    httpWorkers: options.httpWorkers ?? 1,
    httpSlots,
    env,
    fixedPorts: { httpBase, wsBase },
  });
  return { nginx, manager };
}
