/**
 * Route fuzz: starts the registry in-process on a fresh data directory, reads every route from
 * its own OpenAPI document, and sends BENCH_FUZZ_REQUESTS (default 10,000) hostile requests spread over all
 * of them — overflowing and malformed paging, hostile path segments, deep/invalid/null-laden JSON, wrong and
 * unknown content types and charsets, garbage multipart, forged tokens, over-long URLs and headers, aborted
 * bodies, malformed multipart (two file parts, a field sent twice or over 2 MB, an unknown part, a 20 KB part
 * header, hundreds of tiny parts, the file before the fields, a truncated form). It fails (exit 1) on any 5xx, any
 * reset or dropped answer, any error answer that is not JSON, a multipart request answered after more than a
 * second, and a staged upload left in DATA_DIR/tmp at the end, and prints the server's RSS after warm-up,
 * halfway and at the end (after GC) to show it stays flat.
 *
 * Run after `npm run build`:  node --expose-gc dist/bench/fuzz.js
 * On MySQL/MariaDB: BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/toolbox_fuzz (a fresh database is created and dropped).
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtService } from '@nestjs/jwt';
import { createConnection } from 'mysql2/promise';
import yazl from 'yazl';
import { TokenVerifier } from '../src/auth/token-verifier.js';
import { loadConfig } from '../src/config/config.js';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { RegistryAppModule, registryHttpAppOptions } from '../src/apps/registry.app-module.js';

const TOTAL = Number(process.env.BENCH_FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 8;
const SECRET = randomBytes(24).toString('hex');

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Send the headers and part of the body, then drop the connection (no answer expected). */
  abort?: boolean;
}

interface Outcome {
  status: number | 'reset';
  json: boolean;
  /** From the first byte sent to the end of the answer. */
  elapsedMs: number;
}

function send(port: number, probe: Probe): Promise<Outcome> {
  const started = Date.now();
  return new Promise((settle) => {
    const resolve = (outcome: Omit<Outcome, 'elapsedMs'>) => settle({ ...outcome, elapsedMs: Date.now() - started });
    const body = probe.body === undefined ? undefined : Buffer.from(probe.body);
    const headers: Record<string, string> = { ...probe.headers };
    if (body && !probe.abort) headers['content-length'] = String(body.length);
    if (probe.abort) headers['content-length'] = String((body?.length ?? 0) + 1_000_000);
    const request = http.request({ host: '127.0.0.1', port, method: probe.method, path: probe.path, headers });
    request.setTimeout(15_000, () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve({ status: probe.abort ? 0 : 'reset', json: true }));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', () => resolve({ status: 'reset', json: false }));
      response.on('end', () => {
        const type = String(response.headers['content-type'] ?? '');
        let json = /json/.test(type);
        if (json && chunks.length)
          try {
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            json = false;
          }
        resolve({ status: response.statusCode ?? 0, json });
      });
    });
    if (probe.abort) {
      request.write(body ?? Buffer.alloc(0));
      setTimeout(() => {
        request.destroy();
        resolve({ status: 0, json: true });
      }, 5);
      return;
    }
    request.end(body);
  });
}

const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const HOSTILE_SEGMENTS = [
  'a'.repeat(300),
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  '%ff%fe',
  'ünïcödé',
  '%E2%80%AE',
  '1e20',
  '-1',
  'null',
  '%20',
  'x'.repeat(5000),
];
const HOSTILE_QUERIES = [
  'page=99999999999999999999',
  'page=1e20',
  'page=-1&per_page=0',
  'per_page=100000',
  'page=abc',
  'page=1&page=2',
  'q=' + 'a'.repeat(3000),
  'q=%00%ff',
  'q=*',
  'q="unterminated',
  'q=-+-+',
  'names=' + Array.from({ length: 2000 }, (_, i) => `n${i}`).join(','),
  'package_type=nope',
  'visibility[]=x',
  'q[$ne]=1',
  'limit=1e308',
  'q=' + 'x'.repeat(9000),
];
const formField = (name: string, value: string) =>
  `--x\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const formFile = (name: string, extraHeaders = '') =>
  `--x\r\nContent-Disposition: form-data; name="${name}"; filename="f.zip"\r\n${extraHeaders}\r\nPK\u0003\u0004 not a zip\r\n`;
const HOSTILE_BODIES: Array<[string, string]> = [
  ['application/json', deep(3000)],
  ['application/json', '{"a":'.repeat(3000) + '1' + '}'.repeat(3000)],
  ['application/json', '{'],
  ['application/json', ''],
  ['application/json', 'null'],
  ['application/json', '[]'],
  ['application/json', '"string"'],
  ['application/json', '{"display_name":null,"visibility":null,"toolbox_version":null,"names":null}'],
  ['application/json', '{"packages":[{"name":null,"version":{}}],"toolbox_version":null}'],
  ['application/json', '{"names":' + deep(1500) + '}'],
  ['application/json', '{"name":"' + 'n'.repeat(100_000) + '"}'],
  ['application/json', '{"page":1e400,"per_page":-5}'],
  ['application/json', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'],
  ['application/json; charset=klingon', '{}'],
  ['application/json', '\u0000\u0001'],
  ['text/plain', 'hello'],
  ['application/xml', '<a/>'],
  ['multipart/form-data', 'garbage without a boundary'],
  ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nbroken'],
  [
    'multipart/form-data; boundary=x',
    `--x\r\nContent-Disposition: form-data; name="dependencies"\r\n\r\n${deep(2000)}\r\n--x--\r\n`,
  ],
  [
    'multipart/form-data; boundary=x',
    formField('version', '9.0.0') + formFile('file') + formFile('file') + '--x--\r\n',
  ],
  [
    'multipart/form-data; boundary=x',
    formField('changelog', 'c'.repeat(2 * 1024 * 1024)) + formFile('file') + '--x--\r\n',
  ],
  ['multipart/form-data; boundary=x', formField('version', '9.0.1') + formField('version', '9.0.2') + '--x--\r\n'],
  ['multipart/form-data; boundary=x', formField('version', '9.0.3') + formFile('other') + '--x--\r\n'],
  ['multipart/form-data; boundary=x', formFile('file', `X-Pad: ${'h'.repeat(20_000)}\r\n`) + '--x--\r\n'],
  [
    'multipart/form-data; boundary=x',
    Array.from({ length: 500 }, (_, i) => formField(`f${i}`, '')).join('') + '--x--\r\n',
  ],
  ['multipart/form-data; boundary=x', formFile('file') + formField('version', '9.0.4') + '--x--\r\n'],
  ['multipart/form-data; boundary=x', formField('metadata', '{"name":"fuzz-late"}') + formFile('file').slice(0, -10)],
];

function zipFile(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('{"name":"fuzz"}'), 'tb-mod.json');
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function multipart(fields: Record<string, string>, file?: Buffer): { type: string; body: Buffer } {
  const boundary = `fuzz${randomBytes(6).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file)
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      file,
      Buffer.from('\r\n'),
    );
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-fuzz-'));
  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  let database: string | null = null;
  const env: Record<string, string> = {
    PLATFORM_JWT_SECRET: SECRET,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_ANON_PER_HOUR: '100000000',
    RATE_LIMIT_AUTH_PER_HOUR: '100000000',
  };
  if (mysqlUrl) {
    const url = new URL(mysqlUrl);
    database = `${url.pathname.replace(/^\//, '') || 'toolbox_fuzz'}_${randomBytes(3).toString('hex')}`;
    const admin = await createConnection({
      uri: `${url.protocol}//${url.username ? `${url.username}@` : ''}${url.host}/`,
    });
    await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    url.pathname = `/${database}`;
    env.DATABASE_URL = url.toString();
  }
  const config = loadConfig(env, { services: ['registry'] });
  const app = await createHttpApp(RegistryAppModule.forRoot(config), {
    ...registryHttpAppOptions(config),
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const signer = new TokenVerifier(new JwtService({}), config);
  const owner = signer.sign({ userId: 'fuzz-owner', username: 'fuzzer', ttlSeconds: 3600 });
  const admin = signer.sign({ userId: 'fuzz-admin', username: 'root', admin: true, ttlSeconds: 3600 });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const json = { 'content-type': 'application/json' };

  // A publisher, a package and a version to aim at.
  await send(port, {
    method: 'POST',
    path: '/api/v1/auth/register-publisher',
    headers: { ...json, ...bearer(owner) },
    body: JSON.stringify({ name: 'fuzzpub', display_name: 'Fuzz' }),
  });
  await send(port, {
    method: 'POST',
    path: '/api/v1/packages',
    headers: { ...json, ...bearer(owner) },
    body: JSON.stringify({ name: 'fuzzpkg', display_name: 'fuzzpkg', description: 'fuzz target', package_type: 'mod' }),
  });
  await send(port, {
    method: 'POST',
    path: '/api/v1/artifacts',
    headers: { ...json, ...bearer(owner) },
    body: JSON.stringify({ name: 'fuzzapp', artifact_type: 'desktop_app', description: 'fuzz target' }),
  });
  const upload = multipart({ version: '1.0.0' }, await zipFile());
  const uploaded = await send(port, {
    method: 'POST',
    path: '/api/v1/packages/fuzzpkg/versions',
    headers: { 'content-type': upload.type, ...bearer(owner) },
    body: upload.body,
  });
  if (uploaded.status !== 201) throw new Error(`seed upload answered ${uploaded.status}`);

  const documentResponse = await fetch(`http://127.0.0.1:${port}/api/docs-json`);
  const document = (await documentResponse.json()) as { paths: Record<string, Record<string, unknown>> };
  const routes: Array<{ method: string; template: string }> = [];
  for (const [template, operations] of Object.entries(document.paths))
    for (const method of Object.keys(operations)) routes.push({ method: method.toUpperCase(), template });

  const tokens = [
    undefined,
    owner,
    admin,
    'garbage',
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    owner.slice(0, -3) + 'abc',
    'x'.repeat(9000),
  ];
  const fill = (template: string, n: number) =>
    template.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
      if (n % 3 === 0) return name === 'name' ? 'fuzzpkg' : name === 'version' ? '1.0.0' : 'fuzzpub';
      return HOSTILE_SEGMENTS[(n + name.length) % HOSTILE_SEGMENTS.length];
    });

  function probeAt(n: number): Probe {
    const route = routes[n % routes.length];
    const variant = Math.floor(n / routes.length);
    const token = tokens[variant % tokens.length];
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    let path = fill(route.template, variant);
    path += `?${HOSTILE_QUERIES[variant % HOSTILE_QUERIES.length]}`;
    if (variant % 29 === 7) headers['x-huge'] = 'h'.repeat(20_000);
    if (variant % 31 === 5) path += '&pad=' + 'p'.repeat(20_000);
    if (variant % 17 === 3) headers.range = 'bytes=99999999999-1';
    if (variant % 19 === 4) headers['if-none-match'] = '*';
    if (route.method === 'GET' || route.method === 'DELETE' || route.method === 'HEAD')
      return { method: route.method, path, headers };
    const [type, body] = HOSTILE_BODIES[variant % HOSTILE_BODIES.length];
    return {
      method: route.method,
      path,
      headers: { ...headers, 'content-type': type },
      body,
      abort: variant % 23 === 11,
    };
  }

  const failures: Array<{ probe: Probe; outcome: Outcome }> = [];
  const statuses = new Map<string, number>();
  let rssAfterWarmUp = 0;
  let rssHalfway = 0;
  let heapHalfway = 0;
  let slowest = 0;
  let uploadProbes = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  const started = Date.now();
  let next = 0;
  async function worker(): Promise<void> {
    while (next < TOTAL) {
      const n = next++;
      if (n === 1000) {
        gc?.();
        rssAfterWarmUp = process.memoryUsage().rss;
      }
      if (n === Math.floor(TOTAL / 2)) {
        gc?.();
        ({ rss: rssHalfway, heapUsed: heapHalfway } = process.memoryUsage());
      }
      const probe = probeAt(n);
      const outcome = await send(port, probe);
      const key = String(outcome.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (probe.abort) continue;
      slowest = Math.max(slowest, outcome.elapsedMs);
      // A malformed form is refused as soon as it shows: never waited on.
      const slowForm = /^multipart\//.test(probe.headers?.['content-type'] ?? '') && outcome.elapsedMs > 1000;
      const bad =
        slowForm ||
        outcome.status === 'reset' ||
        (typeof outcome.status === 'number' && outcome.status >= 500) ||
        (typeof outcome.status === 'number' && outcome.status >= 400 && probe.method !== 'HEAD' && !outcome.json);
      if (bad) failures.push({ probe, outcome });
    }
  }
  // The spread below rarely pairs a malformed form with a caller allowed to upload: send each one, as the owner,
  // to every route that takes multipart (first, while the package and artifact exist), so the reader has to answer.
  const uploadRoutes = Object.entries(document.paths).flatMap(([template, operations]) =>
    Object.entries(operations as Record<string, { requestBody?: { content?: Record<string, unknown> } }>)
      .filter(([, operation]) => operation.requestBody?.content?.['multipart/form-data'])
      .map(([method]) => ({
        method: method.toUpperCase(),
        path: template.replace('{name}', template.includes('artifacts') ? 'fuzzapp' : 'fuzzpkg'),
      })),
  );
  for (const route of uploadRoutes)
    for (const [type, body] of HOSTILE_BODIES.filter(([type]) => type.startsWith('multipart/'))) {
      const probe: Probe = { ...route, headers: { 'content-type': type, ...bearer(owner) }, body };
      const outcome = await send(port, probe);
      uploadProbes += 1;
      slowest = Math.max(slowest, outcome.elapsedMs);
      const key = String(outcome.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      const bad =
        outcome.status === 'reset' || outcome.elapsedMs > 1000 || !outcome.json || Number(outcome.status) >= 500;
      if (bad) failures.push({ probe, outcome });
    }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await new Promise((resolve) => setTimeout(resolve, 500));
  gc?.();
  const { rss: rssEnd, heapUsed: heapEnd } = process.memoryUsage();
  const seconds = (Date.now() - started) / 1000;
  // Every request is answered or aborted by now: no upload may still be staged.
  const leftovers = await readdir(join(dataDir, 'tmp')).catch(() => []);

  await app.close();
  await rm(dataDir, { recursive: true, force: true });
  if (database && mysqlUrl) {
    const url = new URL(mysqlUrl);
    const admin2 = await createConnection({
      uri: `${url.protocol}//${url.username ? `${url.username}@` : ''}${url.host}/`,
    });
    await admin2.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin2.end();
  }

  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(`Route fuzz on ${mysqlUrl ? 'MySQL/MariaDB' : 'SQLite'}: ${routes.length} routes, ${TOTAL} requests`);
  console.log('| measure | value |\n|---|---|');
  console.log(
    `| requests | ${TOTAL} in ${seconds.toFixed(1)} s, after ${uploadProbes} malformed forms to the upload routes |`,
  );
  console.log(
    `| statuses | ${[...statuses.entries()]
      .sort()
      .map(([status, count]) => `${status === '0' ? 'aborted' : status}: ${count}`)
      .join(', ')} |`,
  );
  console.log(`| 5xx / resets / non-JSON errors / multipart answers over 1 s | ${failures.length} |`);
  console.log(`| slowest answer | ${slowest} ms |`);
  console.log(`| staged uploads left in DATA_DIR/tmp | ${leftovers.length} |`);
  console.log(
    `| RSS after 1,000 → half → after ${TOTAL} (GC${gc ? '' : ' unavailable: run with --expose-gc'}) | ${mb(rssAfterWarmUp)} → ${mb(rssHalfway)} → ${mb(rssEnd)} |`,
  );
  console.log(`| JS heap used, half → end | ${mb(heapHalfway)} → ${mb(heapEnd)} |`);
  for (const { probe, outcome } of failures.slice(0, 20))
    console.log(
      `  FAIL ${outcome.status} json=${outcome.json} ${outcome.elapsedMs} ms ${probe.method} ${probe.path.slice(0, 160)}`,
    );
  for (const name of leftovers.slice(0, 5)) console.log(`  LEFT ${name}`);
  if (failures.length || leftovers.length) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
