/**
 * Model gateway overhead: the latency the gateway adds (p50/p99) over calling the (fake) Ollama runtime
 * directly, for non-streamed and streamed chat, with the admin key (usage row only) and with a PAYG key
 * (a ledger hold, then the exact charge with the usage row, per call), and requests/s under 10 concurrent
 * clients; at the end it checks the PAYG user's ledger (rows sum to the balance, no hold left open).
 * The goal: ≤ 0.5 ms p50 added (Bifrost 0.44 ms, Portkey 2.37 ms, LiteLLM 4.34 ms on the same
 * kind of sequential localhost-mock measurement).
 *
 *   npm run build && node dist/bench/gateway.js [--requests N] [--seconds S] [--server-cpu-prof DIR]
 *
 * Then the same non-streamed calls go to the gateway started in a process of its own over the same database
 * (bench/support/gateway-process.ts), as deployed: the client's and the fake runtime's work is not on its event
 * loop. That part also prints the gateway process's CPU time per call; `--server-cpu-prof DIR` profiles that
 * process alone with node --cpu-prof (read it with `node tools/cpuprofile-top.mjs`).
 *
 * The rest runs in this process on SQLite in a temporary data directory (DATABASE_URL / REDIS_URL from
 * the environment are used when set), so the figures are for one core of the machine. On MySQL/MariaDB:
 *
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/<an existing database> node dist/bench/gateway.js
 *
 * (migrated at start; each run adds its own user, so runs can share the database).
 */
import 'reflect-metadata';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../src/apps/gateway.app-module.js';
import { loadConfig } from '../src/config/config.js';
import { MeteringService } from '../src/modules/gateway/accounts/metering.service.js';
import { defaultSettings } from '../src/modules/gateway/gateway-settings.js';
import { DataSource } from 'typeorm';
import { FakeOllama } from '../test/fixtures/fake-ollama.js';
import { startGatewayProcess } from './support/gateway-process.js';
import { ascending, percentile } from './support/stats.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '5' },
    // Profile the gateway's own process (node --cpu-prof) into this directory: the server alone, no client.
    'server-cpu-prof': { type: 'string' },
  },
});
const REQUESTS = Number(values.requests);
const SECONDS = Number(values.seconds);

const MESSAGES = [{ role: 'user', content: 'the quick brown fox jumps over the lazy dog' }];

/**
 * Times `direct` and `via` alternately, call by call, so both see the same moments of a noisy machine
 * (load from other processes, GC, CPU frequency) and their difference is the gateway's own cost.
 */
async function timePair(requests: number, direct: () => Promise<void>, via: () => Promise<void>): Promise<number[][]> {
  for (let index = 0; index < Math.min(500, requests); index++) {
    await direct(); // warm-up (JIT, connections, caches)
    await via();
  }
  const samples: number[][] = [[], []];
  const once = async (call: () => Promise<void>, into: number[]) => {
    const started = process.hrtime.bigint();
    await call();
    into.push(Number(process.hrtime.bigint() - started) / 1e6);
  };
  for (let index = 0; index < requests; index++) {
    await once(direct, samples[0]);
    await once(via, samples[1]);
  }
  return samples.map(ascending);
}

async function post(url: string, body: unknown, key?: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

async function throughput(seconds: number, concurrency: number, call: () => Promise<void>): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await call();
        done += 1;
      }
    }),
  );
  return done / seconds;
}

/**
 * The ledger's own cost, without HTTP: a PAYG hold (what a call waits for before it is sent to the runtime) and
 * a settlement written alone (what follows the response), each timed in-process over many calls.
 */
async function ledgerOperations(metering: MeteringService, userId: string, dataSource: DataSource): Promise<void> {
  const caller = { admin: false, userId, keyId: null, email: null, tier: 'payg' as const };
  const call = { endpoint: 'chat.completions', model: 'llama3.2', promptTokensEstimate: 9, maxCompletionTokens: 10 };
  const holds: number[] = [];
  const settlements: number[] = [];
  // What one database round trip costs here (a statement that writes nothing), to read the hold's figure against.
  const roundTrips: number[] = [];
  for (let index = 0; index < REQUESTS + 500; index++) {
    const asked = process.hrtime.bigint();
    await dataSource.query('SELECT 1');
    if (index >= 500) roundTrips.push(Number(process.hrtime.bigint() - asked) / 1e3);
    const started = process.hrtime.bigint();
    const ticket = await metering.begin(caller, call);
    const held = process.hrtime.bigint();
    await metering.finish(ticket, { promptTokens: 9, completionTokens: 10, status: 200 });
    await metering.flush();
    const settled = process.hrtime.bigint();
    if (index < 500) continue; // warm-up
    holds.push(Number(held - started) / 1e3);
    settlements.push(Number(settled - held) / 1e3);
  }
  // Back-to-back calls of one user: each hold also writes the previous call's settlement, in its own transaction.
  const folded: number[] = [];
  for (let index = 0; index < REQUESTS + 500; index++) {
    const started = process.hrtime.bigint();
    const ticket = await metering.begin(caller, call);
    const held = process.hrtime.bigint();
    await metering.finish(ticket, { promptTokens: 9, completionTokens: 10, status: 200 });
    if (index >= 500) folded.push(Number(held - started) / 1e3);
  }
  await metering.flush();
  ascending(holds);
  ascending(settlements);
  ascending(roundTrips);
  ascending(folded);
  console.log(`\nLedger operations in-process, ${REQUESTS} calls`);
  console.log('| Operation | p50 µs | p99 µs |');
  console.log('|---|---|---|');
  console.log(
    `| hold (before the runtime is called) | ${percentile(holds, 0.5).toFixed(1)} | ${percentile(holds, 0.99).toFixed(1)} |`,
  );
  console.log(
    `| one round trip to the database (\`SELECT 1\`) | ${percentile(roundTrips, 0.5).toFixed(1)} | ${percentile(roundTrips, 0.99).toFixed(1)} |`,
  );
  console.log(
    `| settlement written alone (after the response) | ${percentile(settlements, 0.5).toFixed(1)} | ${percentile(settlements, 0.99).toFixed(1)} |`,
  );
  console.log(
    `| hold writing the previous call's settlement (back-to-back calls of one user) | ${percentile(folded, 0.5).toFixed(1)} | ${percentile(folded, 0.99).toFixed(1)} |`,
  );
}

/** A PAYG user with a large balance and a key of theirs, through the admin API of the gateway at `gateway`. */
async function paygUser(gateway: string, admin: string): Promise<{ id: string; key: string }> {
  const createUser = await fetch(`${gateway}/admin/api/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, balance: 1_000_000 }),
  });
  const user = (await createUser.json()) as { id: string };
  const issued = await fetch(`${gateway}/admin/api/users/${user.id}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return { id: user.id, key: ((await issued.json()) as { key: string }).key };
}

async function account(gateway: string, admin: string, userId: string): Promise<{ balance: number; held: number }> {
  const response = await fetch(`${gateway}/admin/api/users/${userId}`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  return (await response.json()) as { balance: number; held: number };
}

function printRows(rows: Array<[string, number[], number[]]>): void {
  const fmt = (value: number) => value.toFixed(3);
  console.log(
    '| Path | direct p50 ms | direct p99 ms | gateway p50 ms | gateway p99 ms | added p50 ms | added p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [label, baseline, through] of rows) {
    const [b50, b99, g50, g99] = [
      percentile(baseline, 0.5),
      percentile(baseline, 0.99),
      percentile(through, 0.5),
      percentile(through, 0.99),
    ];
    console.log(
      `| ${label} | ${fmt(b50)} | ${fmt(b99)} | ${fmt(g50)} | ${fmt(g99)} | ${fmt(g50 - b50)} | ${fmt(g99 - b99)} |`,
    );
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-gateway-bench-'));
  const ollama = new FakeOllama();
  const ollamaUrl = await ollama.start();
  const settings = { ...defaultSettings(), rate_limits: { payg: 1_000_000_000, sub: 1_000_000_000 } };
  await mkdir(join(dataDir, 'gateway'), { recursive: true });
  await writeFile(join(dataDir, 'gateway', 'config.json'), JSON.stringify(settings));
  const config = loadConfig(
    { ...process.env, DATA_DIR: dataDir, OLLAMA_URL: ollamaUrl, LOG_LEVEL: 'error' },
    { services: ['gateway'] },
  );
  const app = await createHttpApp(GatewayAppModule.forRoot(config), {
    ...gatewayHttpAppOptions(config),
    logger: ['error'],
    docsPath: false,
  });
  await app.listen(0, '127.0.0.1');
  const gateway = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  try {
    const admin = settings.admin_key;
    const user = await paygUser(gateway, admin);
    const payg = user.key;

    const direct = (stream: boolean) => () =>
      post(`${ollamaUrl}/api/chat`, { model: 'llama3.2:latest', messages: MESSAGES, stream });
    const via =
      (stream: boolean, key: string, base = gateway) =>
      () =>
        post(
          `${base}/v1/chat/completions`,
          {
            model: 'llama3.2',
            messages: MESSAGES,
            stream,
            ...(stream ? { stream_options: { include_usage: true } } : {}),
          },
          key,
        );

    await ledgerOperations(app.get(MeteringService), user.id, app.get(DataSource));

    const rows: Array<[string, number[], number[]]> = [];
    for (const stream of [false, true]) {
      for (const [label, key] of [
        ['admin key', admin],
        ['PAYG key (billed)', payg],
      ] as const) {
        const [baseline, through] = await timePair(REQUESTS, direct(stream), via(stream, key));
        rows.push([`${stream ? 'streamed' : 'non-streamed'}, ${label}`, baseline, through]);
      }
    }
    console.log(
      `\nModel gateway overhead — ${REQUESTS} sequential requests each (direct and gateway calls alternate), fake Ollama on loopback, ${config.database.type}`,
    );
    printRows(rows);
    console.log(`\nThroughput, 10 concurrent clients, ${SECONDS} s each`);
    console.log('| Path | requests/s |');
    console.log('|---|---|');
    console.log(
      `| direct to fake Ollama, non-streamed | ${(await throughput(SECONDS, 10, direct(false))).toFixed(0)} |`,
    );
    console.log(
      `| gateway, non-streamed, admin key | ${(await throughput(SECONDS, 10, via(false, admin))).toFixed(0)} |`,
    );
    console.log(
      `| gateway, non-streamed, PAYG key | ${(await throughput(SECONDS, 10, via(false, payg))).toFixed(0)} |`,
    );
    console.log(`| gateway, streamed, PAYG key | ${(await throughput(SECONDS, 10, via(true, payg))).toFixed(0)} |`);

    // The same calls to a gateway in a process of its own (as deployed: the client's and the fake runtime's work
    // is not on its event loop), over the same database, with a PAYG user of its own.
    const own = await startGatewayProcess({ dataDir, ollamaUrl, cpuProfileDir: values['server-cpu-prof'] });
    let ownUser: { id: string; key: string };
    const ownRows: Array<[string, number[], number[]]> = [];
    let ownThroughput: number;
    // The gateway process's CPU time per call (user + system, all its threads): what load on the machine barely moves.
    const ownCpu: Array<[string, number]> = [];
    try {
      ownUser = await paygUser(own.baseUrl, admin);
      for (const [label, key] of [
        ['admin key', admin],
        ['PAYG key (billed)', ownUser.key],
      ] as const) {
        const cpuBefore = await own.cpuMicros();
        const [baseline, through] = await timePair(REQUESTS, direct(false), via(false, key, own.baseUrl));
        const calls = Math.min(500, REQUESTS) + REQUESTS;
        ownCpu.push([`non-streamed, ${label}`, ((await own.cpuMicros()) - cpuBefore) / calls]);
        ownRows.push([`non-streamed, ${label}`, baseline, through]);
      }
      ownThroughput = await throughput(SECONDS, 10, via(false, ownUser.key, own.baseUrl));
    } finally {
      await own.stop();
    }
    console.log(
      `\nThe gateway in its own process — ${REQUESTS} sequential requests each (direct and gateway calls alternate)`,
    );
    printRows(ownRows);
    console.log(`| PAYG calls/s, 10 concurrent clients, ${SECONDS} s | ${ownThroughput.toFixed(0)} |`);
    console.log('\n| Gateway process CPU per call (process.cpuUsage, warm-up included) | µs |');
    console.log('|---|---|');
    for (const [label, micros] of ownCpu) console.log(`| ${label} | ${micros.toFixed(0)} |`);

    // Every PAYG call above went through the ledger: a hold row and a charge row each, summing to the balance.
    let consistent = true;
    for (const [where, userId] of [
      ['in-process', user.id],
      ['own process', ownUser.id],
    ] as const) {
      const { balance, held } = await account(gateway, admin, userId);
      const [sums] = (await app
        .get(DataSource)
        .query(
          'SELECT COUNT(*) AS rows_count, COALESCE(SUM(amount_micros), 0) AS amount FROM gateway_transactions WHERE user_id = ?',
          [userId],
        )) as Array<{ rows_count: number | string; amount: number | string }>;
      const ok = Math.round(balance * 1e6) === Number(sums.amount) && held === 0;
      consistent &&= ok;
      console.log(
        `\nLedger (${where}): ${Number(sums.rows_count)} rows for the PAYG user, sum ${Number(sums.amount)} micros, balance ${balance}, held ${held}: ${ok ? 'consistent' : 'INCONSISTENT'}`,
      );
    }
    console.log(
      `Load average during the run (1/5/15 min): ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' / ')}`,
    );
    if (!consistent) process.exitCode = 1;
  } finally {
    await app.close();
    await ollama.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
