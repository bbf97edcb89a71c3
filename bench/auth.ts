/**
 * WorkerAuth figures: what the revocation check (one shared-store lookup on every authenticated request)
 * costs on each AuthStore driver, with BENCH_REVOKED revocations already stored (default 20,000), next to
 * the HS256 verification every request pays anyway; and the cost of issuing a token bundle.
 *
 *   npm run build && node dist/bench/auth.js
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/toolbox_bench BENCH_REDIS_URL=redis://127.0.0.1:6379 node dist/bench/auth.js
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtService } from '@nestjs/jwt';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import {
  DatabaseAuthStore,
  MemoryAuthStore,
  RedisAuthStore,
  type AuthStore,
} from '../src/auth/shared-store/auth-store.js';
import { Revocations } from '../src/auth/shared-store/revocations.js';
import { TokenVerifier } from '../src/auth/token-verifier.js';
import type { PlatformConfig } from '../src/config/config.js';
import { createDataSourceOptions } from '../src/database/data-source-options.js';
import { ascending, percentile } from './support/stats.js';

const REVOKED = Number(process.env.BENCH_REVOKED ?? 20_000);
const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 5_000);
const SECRET = randomBytes(32).toString('hex');

interface Row {
  what: string;
  p50: number;
  p95: number;
  perSecond: number;
}

async function measure(what: string, count: number, body: (index: number) => unknown): Promise<Row> {
  for (let index = 0; index < Math.min(200, count); index++) await body(index);
  const times: number[] = [];
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) {
    const one = process.hrtime.bigint();
    await body(index);
    times.push(Number(process.hrtime.bigint() - one) / 1000);
  }
  const totalSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  ascending(times);
  return { what, p50: percentile(times, 0.5), p95: percentile(times, 0.95), perSecond: count / totalSeconds };
}

async function fill(store: AuthStore): Promise<string[]> {
  const revocations = new Revocations(store);
  const until = Date.now() / 1000 + 3600;
  const ids: string[] = [];
  const batch: Promise<void>[] = [];
  for (let index = 0; index < REVOKED; index++) {
    const id = randomUUID();
    ids.push(id);
    batch.push(revocations.revoke('token', id, until));
    if (batch.length === 200) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  return ids;
}

async function storeRows(name: string, store: AuthStore): Promise<Row[]> {
  const started = Date.now();
  const revoked = await fill(store);
  const fillSeconds = (Date.now() - started) / 1000;
  console.error(`${name}: ${REVOKED} revocations stored in ${fillSeconds.toFixed(1)} s`);
  const revocations = new Revocations(store);
  const misses = Array.from({ length: LOOKUPS }, () => randomUUID());
  return [
    await measure(`${name}: isRevoked, live token (miss)`, LOOKUPS, (index) =>
      revocations.isRevoked('token', misses[index]),
    ),
    await measure(`${name}: isRevoked, revoked token (hit)`, LOOKUPS, (index) =>
      revocations.isRevoked('token', revoked[index % revoked.length]),
    ),
  ];
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const config = { jwtSecret: SECRET } as PlatformConfig;
  const jwt = new JwtService({});
  const verifier = new TokenVerifier(jwt, config);
  const token = jwt.sign(
    { sub: 'usr_0', user_id: 'usr_0', username: 'bench', level: 1, type: 'access', jti: randomUUID() },
    { secret: SECRET, algorithm: 'HS256', expiresIn: 900 },
  );
  rows.push(await measure('HS256 verify of an access token', LOOKUPS * 4, () => verifier.verify(token)));
  rows.push(
    await measure('HS256 sign of an access + refresh token', LOOKUPS, () => {
      jwt.sign(
        { sub: 'usr_0', type: 'access', jti: randomUUID() },
        { secret: SECRET, algorithm: 'HS256', expiresIn: 900 },
      );
      jwt.sign(
        { sub: 'usr_0', type: 'refresh', jti: randomUUID() },
        { secret: SECRET, algorithm: 'HS256', expiresIn: 604800 },
      );
    }),
  );

  rows.push(...(await storeRows('memory', new MemoryAuthStore())));

  const dir = await mkdtemp(join(tmpdir(), 'tb-bench-auth-'));
  const sqlite = new DataSource(createDataSourceOptions({ type: 'sqlite', location: join(dir, 'bench.sqlite') }));
  await sqlite.initialize();
  await sqlite.runMigrations();
  rows.push(...(await storeRows('database (SQLite)', new DatabaseAuthStore(sqlite))));
  await sqlite.destroy();
  await rm(dir, { recursive: true, force: true });

  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  if (mysqlUrl) {
    const base = new URL(mysqlUrl);
    const database = `${base.pathname.replace(/^\//, '') || 'toolbox_bench'}_auth_${randomBytes(3).toString('hex')}`;
    const server = `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`;
    const admin = await createConnection({ uri: server });
    await admin.query(`CREATE DATABASE \`${database}\``);
    const url = new URL(mysqlUrl);
    url.pathname = `/${database}`;
    const mysql = new DataSource(createDataSourceOptions({ type: 'mysql', location: url.toString() }));
    try {
      await mysql.initialize();
      await mysql.runMigrations();
      rows.push(...(await storeRows('database (MySQL)', new DatabaseAuthStore(mysql))));
    } finally {
      if (mysql.isInitialized) await mysql.destroy();
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    }
  }

  const redisUrl = process.env.BENCH_REDIS_URL;
  if (redisUrl) {
    const redis = new Redis(redisUrl);
    const prefix = `tbbench-auth-${randomBytes(3).toString('hex')}`;
    try {
      rows.push(...(await storeRows('Redis', new RedisAuthStore(redis, prefix))));
    } finally {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
    }
  }

  console.log(`\n${REVOKED} revocations stored, ${LOOKUPS} sequential lookups each\n`);
  console.log('| Operation | p50 µs | p95 µs | per second |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows)
    console.log(
      `| ${row.what} | ${row.p50.toFixed(1)} | ${row.p95.toFixed(1)} | ${Math.round(row.perSecond).toLocaleString('en')} |`,
    );
}

await main();
