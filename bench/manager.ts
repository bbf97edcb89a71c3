/**
 * Worker manager benchmark: a real nginx in a temporary prefix in front of `tb workers start`, and
 *   1. requests/s of GET /api/ping through nginx with 1, 2 and 4 HTTP workers (the scaling curve), p50/p99;
 *   2. two rolling updates of 4 workers — under a steady keep-alive GET + POST client alone, then with wrk beside
 *      it — and scaling 4 → 1 → 4: the update's duration (goal ≤ 10 s) and steps, failed requests of the steady
 *      client that resends nothing (goal 0), what wrk saw meanwhile (wrk resends nothing either), and whether nginx
 *      was reloaded (its worker processes replaced; the manager reloads it for none of this);
 *   3. time from `POST scale` to the new worker serving traffic through nginx;
 *   4. for comparison, when PM2 is installed (`PM2_BIN` or `pm2` on the PATH; never a dependency), `pm2 reload` of
 *      4 cluster-mode instances of a plain Node server behind the same nginx under the same load.
 * Run after `npm run build`: `node dist/bench/manager.js [--seconds 10]` (nginx at NGINX_BIN or /usr/sbin/nginx;
 * the load generator is wrk when installed — `apt-get install wrk` — else a Node client).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRange } from '../test/support/free-ports.js';
import { NGINX_BIN, prepareNginx, steadyClient, type NginxUnderTest } from '../test/support/nginx-under-test.js';
import { parseWrkOutput, wrkInstalled, type WrkFigures } from './support/wrk.js';

const SECRET = 'bench-secret-0123456789abcdefghij';
const CONNECTIONS = 16;
const argument = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const seconds = Number(argument('--seconds')) || 10;
const mainScript = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tb(argv: string[], env: Record<string, string>): { code: number | null; out: string } {
  const run = spawnSync(process.execPath, [mainScript, ...argv], { env: { PATH: process.env.PATH, ...env } });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

type Load = WrkFigures;

const hasWrk = wrkInstalled();

/** wrk on GET /api/ping for `duration` seconds, or until `until` resolves (then SIGINT: wrk prints its totals). */
function wrk(url: string, duration: number, until?: Promise<unknown>): Promise<Load> {
  return new Promise((resolve) => {
    const child = spawn('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${duration}s`, '--latency', `${url}/api/ping`]);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void until?.then(() => child.kill('SIGINT'));
    child.once('close', () => resolve(parseWrkOutput(output)));
  });
}

/** The fallback load: a Node keep-alive client (it competes with the workers for the CPU). */
async function nodeLoad(url: string, duration: number, until?: Promise<unknown>): Promise<Load> {
  const started = performance.now();
  const client = steadyClient(url, CONNECTIONS);
  await (until ?? sleep(duration * 1000));
  const outcome = await client.stop();
  const elapsed = (performance.now() - started) / 1000;
  return {
    requests: outcome.ok,
    rps: outcome.ok / elapsed,
    p50: NaN,
    p99: NaN,
    non2xx: outcome.failed,
    socketErrors: 0,
  };
}

const load = (url: string, duration: number, until?: Promise<unknown>) =>
  hasWrk ? wrk(url, duration, until) : nodeLoad(url, duration, until);

/** Which worker answered through nginx (the HTTP worker's /health names itself), on a new connection. */
function servedBy(url: string): Promise<string | null> {
  return new Promise((resolve) => {
    const req = get(`${url}/health`, { agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.once('end', () => {
        try {
          resolve((JSON.parse(text) as { worker_id?: string }).worker_id ?? null);
        } catch {
          resolve(null);
        }
      });
    });
    req.once('error', () => resolve(null));
  });
}

/**
 * The PM2 command (`PM2_BIN`, else `pm2` on the PATH) and its version, or null when there is none. Asking PM2 its
 * version already starts its daemon in `env.PM2_HOME`: the caller kills it.
 */
function findPm2(env: NodeJS.ProcessEnv): { bin: string; version: string } | null {
  const bin = process.env.PM2_BIN ?? 'pm2';
  const probe = spawnSync(bin, ['--version'], { encoding: 'utf8', env });
  return probe.error || probe.status !== 0 ? null : { bin, version: probe.stdout.trim().split('\n').pop()! };
}

/**
 * What a PM2 user runs: a plain Node HTTP server answering the steady client's GET and POST, closing its listener
 * on SIGINT (PM2's reload signal) and exiting once its connections are done. Node's defaults otherwise.
 */
const PM2_APP = `const { createServer } = require('node:http');
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(req.method === 'POST' ? '{"status":"ok","written":1}' : '{"pong":true}');
  });
});
server.listen(Number(process.env.PM2_BENCH_PORT), '127.0.0.1');
process.on('SIGINT', () => server.close(() => process.exit(0)));
`;

/**
 * PM2 7 in cluster mode (4 instances of PM2_APP on one port) behind the same nginx, one `pm2 reload` while the
 * steady client and wrk send: its duration and what the clients saw. PM2 is never a dependency of the platform;
 * without it the row says so.
 */
async function pm2Rows(nginx: NginxUnderTest): Promise<[string, string, string][]> {
  const appPort = await freePortRange(1);
  const sitePort = await freePortRange(1);
  const env = { ...process.env, PM2_HOME: join(nginx.prefix, 'pm2'), PM2_BENCH_PORT: String(appPort) };
  const pm2 = findPm2(env);
  if (!pm2) return [['PM2 reload of 4 cluster workers (comparison)', 'skipped', 'pm2 not installed (PM2_BIN or PATH)']];
  try {
    return await pm2Reload(nginx, pm2.bin, pm2.version, env, sitePort);
  } finally {
    spawnSync(pm2.bin, ['kill'], { env });
  }
}

async function pm2Reload(
  nginx: NginxUnderTest,
  bin: string,
  version: string,
  env: NodeJS.ProcessEnv,
  sitePort: number,
): Promise<[string, string, string][]> {
  const appPort = Number(env.PM2_BENCH_PORT);
  const pm2Run = (argv: string[]) => {
    const run = spawnSync(bin, argv, { encoding: 'utf8', env });
    if (run.status !== 0) throw new Error(`pm2 ${argv.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  };
  const app = join(nginx.prefix, 'pm2-app.cjs');
  await writeFile(app, PM2_APP);
  // The same proxy settings as the platform's site: upstream keep-alive, retry on the next server.
  await writeFile(
    join(nginx.confDir, 'box-enabled', 'pm2-bench'),
    `upstream pm2_bench { server 127.0.0.1:${appPort}; keepalive 64; keepalive_timeout 4s; }
server {
    listen ${sitePort};
    location / {
        proxy_pass http://pm2_bench;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_next_upstream error timeout http_502 http_503;
    }
}
`,
  );
  spawnSync(NGINX_BIN, ['-p', nginx.prefix, '-c', join(nginx.confDir, 'nginx.conf'), '-s', 'reload']);
  await sleep(1500);
  pm2Run(['start', app, '-i', '4', '--name', 'tb-bench-pm2']);
  const url = `http://127.0.0.1:${sitePort}`;
  await sleep(2000);
  const steady = steadyClient(url, 4);
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const during = load(url, 600, finished);
  await sleep(1000);
  const started = performance.now();
  // Not spawnSync: the steady client runs in this process and must keep sending during the reload.
  const reload = spawn(bin, ['reload', 'tb-bench-pm2'], { env, stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => reload.once('close', resolve));
  if (code !== 0) throw new Error(`pm2 reload failed (${code})`);
  const seconds = (performance.now() - started) / 1000;
  await sleep(1000);
  finish();
  const [wrkDuring, client] = await Promise.all([during, steady.stop()]);
  return [
    [`PM2 ${version} reload of 4 cluster workers (comparison)`, `${seconds.toFixed(1)} s`, 'same nginx settings'],
    [
      '  steady client during it (4 keep-alive loops, GET + POST)',
      `${client.failed} failed of ${client.ok + client.failed}`,
      client.failed ? kinds(client) : 'nothing resent',
    ],
    [
      `  ${hasWrk ? 'wrk' : 'Node client'} during it (${CONNECTIONS} connections, GET)`,
      `${wrkDuring.non2xx} non-2xx, ${wrkDuring.socketErrors} socket errors of ${wrkDuring.requests}`,
      'nothing resent',
    ],
  ];
}

const kinds = (outcome: { byKind: Record<string, number> }) =>
  Object.entries(outcome.byKind)
    .map(([kind, n]) => `${n}× ${kind}`)
    .join(', ');

async function main(): Promise<void> {
  const nginx = await prepareNginx();
  const env: Record<string, string> = {
    PLATFORM_JWT_SECRET: SECRET,
    DATA_DIR: join(nginx.prefix, 'data'),
    ADMIN_UI_PASSWORD: 'bench-password',
    HTTP_WORKERS: '1',
    HTTP_WORKER_PORT: String(await freePortRange(8)),
    WS_WORKER_PORT: String(await freePortRange(4)),
    MANAGER_PORT: String(await freePortRange(1)),
    NGINX_API_RATE: '0',
    LOG_LEVEL: 'warn',
    ...nginx.env,
  };
  for (const step of [['nginx-init'], ['nginx-config', '--write-htpasswd']]) {
    const result = tb(['workers', ...step], env);
    if (result.code !== 0) throw new Error(`tb workers ${step.join(' ')} failed:\n${result.out}`);
  }
  await nginx.start();
  const manager = spawn(process.execPath, [mainScript, 'workers', 'start', '--no-ui'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    // The rolling update's steps as the manager logs them (with the seconds since it began).
    const updateSteps: string[] = [];
    let updateStarted: number | null = null;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      manager.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        for (const line of chunk.toString().split('\n'))
          if (updateStarted !== null && /rolling update ru_|worker-ready|worker-exited/.test(line))
            updateSteps.push(`${((performance.now() - updateStarted) / 1000).toFixed(1)} s  ${line.trim()}`);
        if (output.includes('Worker manager ready')) resolve();
      });
      manager.once('exit', (code) => reject(new Error(`the manager exited (${code}):\n${output}`)));
    });
    const state = JSON.parse(await readFile(join(env.DATA_DIR, 'manager.json'), 'utf8')) as {
      api: string;
      secret: string;
    };
    const api = async (path: string, body?: unknown) => {
      const response = await fetch(`${state.api}/api/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'x-cluster-secret': state.secret, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return response.json() as Promise<any>;
    };
    const httpIds = async () =>
      ((await api('workers')) as { worker_id: string; type: string; state: string }[])
        .filter((w) => w.type === 'http' && w.state === 'running')
        .map((w) => w.worker_id);

    const rows: [string, string, string][] = [];
    const scaleTimes: number[] = [];
    for (const count of [1, 2, 4]) {
      const before = await httpIds();
      if (before.length !== count) {
        const started = performance.now();
        const { started: ids } = (await api('scale', { type: 'http', count })) as { started: string[] };
        // Until every new worker has answered a request through nginx.
        const pending = new Set(ids);
        while (pending.size) {
          const id = await servedBy(nginx.url);
          if (id) pending.delete(id);
        }
        scaleTimes.push(performance.now() - started);
      }
      await load(nginx.url, 2);
      const result = await load(nginx.url, seconds);
      rows.push([
        `GET /api/ping through nginx, ${count} HTTP worker${count === 1 ? '' : 's'}`,
        `${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms`,
        `${result.non2xx + result.socketErrors} errors of ${result.requests}`,
      ]);
    }

    const nginxWorkers = await nginx.workerPids();
    /** Runs a rolling update to its end: its final state and how long it took. */
    const rollingUpdate = async () => {
      updateStarted = performance.now();
      await api('rolling-update', {});
      let update: { state: string; replaced: unknown[]; errors: string[] };
      do {
        await sleep(200);
        update = (await api('status')).rolling_update;
      } while (update.state === 'running');
      const updateSeconds = (performance.now() - updateStarted) / 1000;
      updateStarted = null;
      return { update, updateSeconds };
    };

    // An update with no traffic at all, then at once a burst of concurrent GETs (none resent): nginx must already
    // use the new workers, which nothing but the manager's own requests through nginx can have made it do.
    {
      updateSteps.push('-- update with no traffic');
      const { update, updateSeconds } = await rollingUpdate();
      const statuses = await Promise.all(
        Array.from({ length: 32 }, () =>
          fetch(`${nginx.url}/api/ping`).then(
            async (response) => (await response.arrayBuffer(), response.status),
            () => 0,
          ),
        ),
      );
      rows.push([
        `rolling update of 4 workers, no traffic (${update.state}, ${update.replaced.length} replaced)`,
        `${updateSeconds.toFixed(1)} s`,
        update.errors.join('; ') || 'no errors',
      ]);
      rows.push([
        '  burst of 32 concurrent GETs right after it',
        `${statuses.filter((status) => status !== 200).length} failed of 32`,
        'goal 0; nothing resent',
      ]);
      await sleep(1000);
    }

    // Rolling updates of the 4 workers: first while only the steady GET + POST client sends (CPU to spare for the
    // new workers' start), then while wrk saturates the machine beside it.
    for (const withWrk of [false, true]) {
      const steady = steadyClient(nginx.url, 4);
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const during = withWrk ? load(nginx.url, 600, finished) : null;
      await sleep(1000);
      updateSteps.push(
        `-- update ${withWrk ? `with ${hasWrk ? 'wrk' : 'the Node client'}` : 'under the steady client only'}`,
      );
      const { update, updateSeconds } = await rollingUpdate();
      await sleep(1000);
      finish();
      const [wrkDuring, client] = await Promise.all([during, steady.stop()]);
      const under = withWrk ? `steady client + ${hasWrk ? 'wrk' : 'Node client'}` : 'steady client only';
      rows.push([
        `rolling update of 4 workers, ${under} (${update.state}, ${update.replaced.length} replaced)`,
        `${updateSeconds.toFixed(1)} s`,
        update.errors.join('; ') || 'no errors; goal ≤ 10 s',
      ]);
      rows.push([
        `  steady client during it (4 keep-alive loops, GET + POST)`,
        `${client.failed} failed of ${client.ok + client.failed}`,
        `goal 0; nothing resent${client.failed ? `: ${kinds(client)}` : ''}`,
      ]);
      if (wrkDuring)
        rows.push([
          `  ${hasWrk ? 'wrk' : 'Node client'} during it (${CONNECTIONS} connections, GET)`,
          `${wrkDuring.non2xx} non-2xx, ${wrkDuring.socketErrors} socket errors of ${wrkDuring.requests}`,
          'nothing resent',
        ]);
    }

    // Scaling down to one worker and back up while the steady client sends.
    const scaling = steadyClient(nginx.url, 4);
    await sleep(1000);
    const scaleStarted = performance.now();
    await api('scale', { type: 'http', count: 1 });
    await sleep(1000);
    await api('scale', { type: 'http', count: 4 });
    const scaleSeconds = (performance.now() - scaleStarted) / 1000;
    await sleep(1000);
    const scaled = await scaling.stop();
    rows.push([
      'steady client while scaling 4 → 1 → 4',
      `${scaled.failed} failed of ${scaled.ok + scaled.failed}`,
      `goal 0; nothing resent; ${scaleSeconds.toFixed(1)} s${scaled.failed ? `: ${kinds(scaled)}` : ''}`,
    ]);
    const reloaded = (await nginx.workerPids()).join() !== nginxWorkers.join();
    rows.push([
      'nginx reloads during the update and the scaling',
      reloaded ? 'reloaded' : '0',
      'same nginx worker processes before and after',
    ]);
    rows.push([
      'time from scale to every new worker serving via nginx',
      scaleTimes.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ') + ' (1→2, 2→4)',
      'start + first /health; nginx already lists the port',
    ]);
    rows.push(...(await pm2Rows(nginx)));
    console.log(`\nRolling update steps (manager log):\n${updateSteps.join('\n')}`);
    const width = Math.max(...rows.map((row) => row[0].length));
    const resultWidth = Math.max(...rows.map((row) => row[1].length));
    console.log(
      `\nWorker manager benchmark — nginx ${nginx.url}, ${seconds} s per load, ${hasWrk ? `wrk -t2 -c${CONNECTIONS}` : 'Node client'}, node ${process.version}`,
    );
    console.log(`${'measure'.padEnd(width)} | ${'result'.padEnd(resultWidth)} | note`);
    for (const [measure, result, note] of rows)
      console.log(`${measure.padEnd(width)} | ${result.padEnd(resultWidth)} | ${note}`);
  } finally {
    if (manager.exitCode === null) {
      const exited = new Promise((resolve) => manager.once('exit', resolve));
      manager.kill('SIGTERM');
      await exited;
    }
    await nginx.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
