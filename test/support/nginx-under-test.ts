import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runTb } from './child-processes.js';
import { compiledTb, freePortRange, startManager, type ManagerUnderTest } from './manager-under-test.js';
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
    errorLog: () => readFile(join(prefix, 'logs', 'error.log'), 'utf8').catch(() => ''),
  };
}

/**
 * A steady client: `concurrency` loops sending GET /api/ping and POST /api/client-logs through nginx until stopped;
 * counts every answer that is not 2xx and every network error.
 */
export function steadyClient(baseUrl: string, concurrency = 4) {
  let running = true;
  const outcome = { ok: 0, failed: 0, failures: [] as string[] };
  const loop = async (index: number) => {
    let n = 0;
    while (running) {
      n++;
      const post = (n + index) % 2 === 0;
      try {
        const response = post
          ? await fetch(`${baseUrl}/api/client-logs`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify([{ level: 'debug', message: `steady ${index}/${n}` }]),
            })
          : await fetch(`${baseUrl}/api/ping`);
        await response.arrayBuffer();
        if (response.ok) outcome.ok++;
        else {
          outcome.failed++;
          outcome.failures.push(`${post ? 'POST' : 'GET'} ${response.status}`);
        }
      } catch (error) {
        outcome.failed++;
        outcome.failures.push(`${post ? 'POST' : 'GET'} ${(error as Error).message}`);
      }
    }
  };
  const loops = Array.from({ length: concurrency }, (_, index) => loop(index));
  return {
    outcome,
    async stop() {
      running = false;
      await Promise.all(loops);
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
