import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  currentBootId,
  currentStagingOwner,
  processStartTicks,
  stagingOwnerOf,
  stagingPrefix,
} from '../../../src/common/staging-owner.js';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { sendRaw } from '../../support/raw-request.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import {
  ADMIN,
  createPackage,
  publisherFactory,
  samplePackageZip,
  uploadVersion,
} from '../../support/registry-fixtures.js';
import { zipBuilder } from '../../fixtures/zip-builder.js';

async function stagedFiles(dataDir: string): Promise<string[]> {
  try {
    const entries = await readdir(join(dataDir, 'tmp'), { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

const openDescriptors = async () => (await readdir('/proc/self/fd')).length;

/** Sends the headers and the first part of a large multipart upload, then drops the connection. */
function abortedUpload(baseUrl: string, path: string, token: string): Promise<void> {
  const boundary = 'tbabortboundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n9.9.9\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n` +
    'Content-Type: application/zip\r\n\r\n';
  return new Promise((resolve) => {
    const url = new URL(path, baseUrl);
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + 1024 * 1024),
      },
    });
    req.on('error', () => resolve());
    req.on('response', (response) => {
      response.resume();
      response.on('end', resolve);
    });
    req.write(head);
    req.write(Buffer.alloc(64 * 1024, 1), () => {
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
  });
}

/**
 * Sends form fields and the start of a 10 MiB file part, and resolves with the status if the registry answers
 * within 3 s — it must not wait for the file's bytes when a field already decides the answer.
 */
function statusWhileFileStreams(
  baseUrl: string,
  path: string,
  token: string,
  fields: Record<string, string>,
): Promise<number | 'no answer'> {
  const boundary = 'tbearlyboundary';
  const head =
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n` +
    'Content-Type: application/zip\r\n\r\n';
  return new Promise((resolve) => {
    const req = httpRequest(new URL(path, baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(Buffer.byteLength(head) + 10 * 1024 * 1024),
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('no answer');
    }, 3000);
    req.on('error', () => undefined);
    req.on('response', (response) => {
      clearTimeout(timer);
      response.resume();
      req.destroy();
      resolve(response.statusCode ?? 0);
    });
    req.write(head);
    req.write(Buffer.alloc(16 * 1024, 1));
  });
}

/** Every entry left under DATA_DIR/tmp: staging directories as well as files. */
async function stagingLeftovers(dataDir: string): Promise<string[]> {
  try {
    return await readdir(join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

interface RawAnswer {
  status: number;
  code: string | undefined;
  elapsedMs: number;
}

/**
 * A hand-built POST (see sendRaw) with the caller's token, answered as its status, the error body's `code` and
 * the time it took.
 */
async function sendRawAs(
  baseUrl: string,
  path: string,
  token: string,
  options: { contentType: string; body: Buffer | string; end?: boolean; contentLength?: number; waitMs?: number },
): Promise<RawAnswer | 'no answer'> {
  const { contentType, ...rest } = options;
  const answer = await sendRaw(new URL(path, baseUrl), {
    ...rest,
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
  });
  if (answer === 'no answer') return answer;
  return { status: answer.status, code: answer.json?.code, elapsedMs: answer.elapsedMs };
}

const BOUNDARY = 'tbfuzzboundary';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const fieldPart = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (name: string, content: string, extraHeaders = '') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="a.zip"\r\n${extraHeaders}` +
  `Content-Type: application/zip\r\n\r\n${content}\r\n`;
const closing = `--${BOUNDARY}--\r\n`;

describe.each(backends())('registry hardening on $name', (backend) => {
  let registry: RegistryUnderTest;
  let owner: Awaited<ReturnType<typeof publisherFactory>>;
  let stranger: Awaited<ReturnType<typeof publisherFactory>>;

  beforeAll(async () => {
    registry = await startRegistry(backend);
    owner = await publisherFactory(registry);
    stranger = await publisherFactory(registry);
    await createPackage(owner.client, 'Hardened');
  });

  afterAll(async () => {
    await registry?.close();
  });

  /**
   * Starts the owner's upload of `version` of Hardened: the version field and the file part's headers, with 10 MiB
   * announced; `written` runs once they are sent. The caller writes more, or destroys the request.
   */
  const startVersionUpload = (version: string, written?: () => void) => {
    const req = httpRequest(new URL('/api/v1/packages/Hardened/versions', registry.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.client.bearer}`,
        'content-type': MULTIPART,
        'content-length': String(10 * 1024 * 1024),
      },
    });
    req.on('error', () => undefined);
    req.write(
      fieldPart('version', version) +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\n`,
      written,
    );
    return req;
  };

  describe('aborted uploads', () => {
    it('leave no staged file and no open descriptor after 20 aborts', async () => {
      const before = await openDescriptors();
      for (let i = 0; i < 20; i += 1) {
        await abortedUpload(registry.baseUrl, '/api/v1/packages/Hardened/versions', owner.client.bearer!);
      }
      expect(
        await eventually(
          () => stagedFiles(registry.dataDir),
          (files) => files.length === 0,
        ),
      ).toEqual([]);
      const after = await eventually(openDescriptors, (count) => count <= before + 2);
      expect(after).toBeLessThanOrEqual(before + 2);
    });

    it('answer 409 for a taken version as soon as the file part starts, without waiting for its bytes', async () => {
      await createPackage(owner.client, 'Taken');
      expect((await uploadVersion(owner.client, 'Taken', '1.0.0')).status).toBe(201);
      const status = await statusWhileFileStreams(
        registry.baseUrl,
        '/api/v1/packages/Taken/versions',
        owner.client.bearer!,
        {
          version: '1.0.0',
        },
      );
      expect(status).toBe(409);
      expect(
        await eventually(
          () => stagedFiles(registry.dataDir),
          (files) => files.length === 0,
        ),
      ).toEqual([]);
    });

    it('answer 409 for a taken package name on a multipart create before the file is staged', async () => {
      const status = await statusWhileFileStreams(registry.baseUrl, '/api/v1/packages', owner.client.bearer!, {
        metadata: JSON.stringify({ name: 'hardened', description: 'same name, other case' }),
      });
      expect(status).toBe(409);
      expect(
        await eventually(
          () => stagedFiles(registry.dataDir),
          (files) => files.length === 0,
        ),
      ).toEqual([]);
    });

    it('answer 422 for invalid multipart create metadata before the file is staged', async () => {
      const status = await statusWhileFileStreams(registry.baseUrl, '/api/v1/packages', owner.client.bearer!, {
        metadata: JSON.stringify({ name: 'bad name!' }),
      });
      expect(status).toBe(422);
    });

    it('are refused before the body is read when the caller does not own the package', async () => {
      const response = await uploadVersion(stranger.client, 'Hardened', '1.0.0');
      expect(response.status).toBe(403);
      const missing = await uploadVersion(owner.client, 'NoSuchPackage', '1.0.0');
      expect(missing.status).toBe(404);
      expect(await stagedFiles(registry.dataDir)).toEqual([]);
    });
  });

  describe('malformed multipart', () => {
    const big = (bytes: number) => 'x'.repeat(bytes);
    // Each body is what a hostile or broken client sends; the answer must come at once, with the registry's code.
    const cases: Array<[string, { contentType?: string; body: string }, number, string]> = [
      [
        'two file parts',
        { body: fieldPart('version', '5.0.0') + filePart('file', 'PK') + filePart('file', 'PK') + closing },
        400,
        'BAD_REQUEST',
      ],
      [
        'a 2 MB changelog field',
        {
          body:
            fieldPart('version', '5.0.1') +
            fieldPart('changelog', big(2 * 1024 * 1024)) +
            filePart('file', 'PK') +
            closing,
        },
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [
        'a field sent twice',
        { body: fieldPart('version', '5.0.2') + fieldPart('version', '5.0.3') + filePart('file', 'PK') + closing },
        400,
        'BAD_REQUEST',
      ],
      [
        'an unknown file part',
        { body: fieldPart('version', '5.0.4') + filePart('other', 'PK') + closing },
        400,
        'BAD_REQUEST',
      ],
      [
        'no boundary',
        { contentType: 'multipart/form-data', body: fieldPart('version', '5.0.5') + closing },
        400,
        'BAD_REQUEST',
      ],
      [
        'a truncated body',
        { body: fieldPart('version', '5.0.6') + filePart('file', 'PK').slice(0, -2) },
        400,
        'BAD_REQUEST',
      ],
      ['an empty body', { body: '' }, 400, 'BAD_REQUEST'],
      [
        'a 20 KB part header',
        { body: fieldPart('version', '5.0.7') + filePart('file', 'PK', `X-Pad: ${big(20 * 1024)}\r\n`) + closing },
        400,
        'BAD_REQUEST',
      ],
      [
        'a thousand tiny parts',
        { body: Array.from({ length: 1000 }, (_, i) => fieldPart(`f${i}`, 'x')).join('') + closing },
        400,
        'BAD_REQUEST',
      ],
    ];

    describe.each([
      ['a version upload', '/api/v1/packages/Hardened/versions'],
      ['a multipart package create', '/api/v1/packages'],
    ])('on %s', (_label, path) => {
      it.each(cases)('answers %s within a second and leaves nothing staged', async (_name, input, status, code) => {
        const answer = await sendRawAs(registry.baseUrl, path, owner.client.bearer!, {
          contentType: input.contentType ?? MULTIPART,
          body: input.body,
        });
        expect(answer).toEqual({ status, code, elapsedMs: expect.any(Number) });
        expect((answer as RawAnswer).elapsedMs).toBeLessThan(1000);
        expect(
          await eventually(
            () => stagingLeftovers(registry.dataDir),
            (entries) => entries.length === 0,
            1000,
          ),
        ).toEqual([]);
      });
    });

    it.each([
      ['declared as 50 MiB', 50 * 1024 * 1024],
      ['sent chunked', undefined],
    ])('answers a field that never ends (%s) with 413 within a second', async (_label, contentLength) => {
      const answer = await sendRawAs(registry.baseUrl, '/api/v1/packages/Hardened/versions', owner.client.bearer!, {
        contentType: MULTIPART,
        body:
          fieldPart('version', '5.1.0') +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="changelog"\r\n\r\n${big(3 * 1024 * 1024)}`,
        end: false,
        contentLength,
      });
      expect(answer).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', elapsedMs: expect.any(Number) });
      expect((answer as RawAnswer).elapsedMs).toBeLessThan(1000);
    });

    it('answers an artifact build upload with two file parts with 400 within a second', async () => {
      const response = await owner.client.post('/api/v1/artifacts', {
        name: 'hardened-app',
        artifact_type: 'desktop_app',
        description: 'An app',
        homepage: 'https://example.com',
      });
      expect(response.status).toBe(201);
      const answer = await sendRawAs(registry.baseUrl, '/api/v1/artifacts/hardened-app/builds', owner.client.bearer!, {
        contentType: MULTIPART,
        body: fieldPart('version', '1.0.0') + filePart('file', 'bin') + filePart('file', 'bin') + closing,
      });
      expect(answer).toEqual({ status: 400, code: 'BAD_REQUEST', elapsedMs: expect.any(Number) });
      expect((answer as RawAnswer).elapsedMs).toBeLessThan(1000);
      expect(
        await eventually(
          () => stagingLeftovers(registry.dataDir),
          (entries) => entries.length === 0,
          1000,
        ),
      ).toEqual([]);
    });

    it('takes the version from a field sent after the file', async () => {
      await createPackage(owner.client, 'LateVersion');
      const zip = samplePackageZip('5.3.0').toString('latin1');
      const answer = await sendRawAs(registry.baseUrl, '/api/v1/packages/LateVersion/versions', owner.client.bearer!, {
        contentType: MULTIPART,
        body: Buffer.from(filePart('file', zip) + fieldPart('version', '5.3.0') + closing, 'latin1'),
      });
      expect(answer).toEqual({ status: 201, code: undefined, elapsedMs: expect.any(Number) });
      expect(
        (await registry.api.get('/api/v1/packages/LateVersion/versions/5.3.0', { accept: 'application/json' })).status,
      ).toBe(200);
      expect(await stagingLeftovers(registry.dataDir)).toEqual([]);
    });

    it('leaves no staging directory after uploads aborted as their file part starts', async () => {
      for (let i = 0; i < 20; i += 1) {
        await new Promise<void>((resolve) => {
          const req = startVersionUpload('5.2.0', () => {
            req.destroy();
            resolve();
          });
        });
      }
      expect(
        await eventually(
          () => stagingLeftovers(registry.dataDir),
          (entries) => entries.length === 0,
        ),
      ).toEqual([]);
    });
  });

  describe('staged uploads left by a crash', () => {
    it('are swept when the registry starts', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'tb-e2e-crash-'));
      const staged = join(dataDir, 'tmp', 'tb-upload-crashed');
      await mkdir(staged, { recursive: true });
      await writeFile(join(staged, 'upload'), Buffer.alloc(1024));
      const old = new Date(Date.now() - 2 * 3600_000);
      await utimes(join(staged, 'upload'), old, old);
      await utimes(staged, old, old);
      const restarted = await startRegistry(backend, { DATA_DIR: dataDir });
      try {
        expect(await stagedFiles(dataDir)).toEqual([]);
      } finally {
        await restarted.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
    it("removes a killed process's fresh staging at start and keeps a live process's", async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'tb-e2e-crash-'));
      const spawnIdle = async () => {
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        await once(child, 'spawn');
        return child as ChildProcess & { pid: number };
      };
      const ownerOf = (pid: number) => ({ pid, startTicks: processStartTicks(pid), bootId: currentBootId() });
      const killed = await spawnIdle();
      const killedOwner = ownerOf(killed.pid);
      killed.kill('SIGKILL');
      await once(killed, 'exit');
      const live = await spawnIdle();
      const stage = async (name: string) => {
        const directory = join(dataDir, 'tmp', name);
        await mkdir(directory, { recursive: true });
        await writeFile(join(directory, 'upload'), Buffer.alloc(1024));
      };
      await stage(`${stagingPrefix(killedOwner)}aB3xYz`);
      const liveName = `${stagingPrefix(ownerOf(live.pid))}Qw12Er`;
      await stage(liveName);
      const restarted = await startRegistry(backend, { DATA_DIR: dataDir });
      try {
        expect(await readdir(join(dataDir, 'tmp'))).toEqual([liveName]);
      } finally {
        live.kill('SIGKILL');
        await restarted.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it('stages each upload under a name that records this process as its owner', async () => {
      const req = startVersionUpload('6.0.0');
      req.write(Buffer.alloc(64 * 1024, 1));
      try {
        const entries = await eventually(
          () => stagingLeftovers(registry.dataDir),
          (names) => names.length === 1,
        );
        expect(entries).toHaveLength(1);
        expect(stagingOwnerOf(entries[0])).toEqual(currentStagingOwner());
      } finally {
        req.destroy();
      }
      expect(
        await eventually(
          () => stagingLeftovers(registry.dataDir),
          (names) => names.length === 0,
        ),
      ).toEqual([]);
    });
  });

  describe('hostile input answers 4xx, never 500', () => {
    const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

    it.each([
      '/api/v1/packages',
      '/api/v1/search?q=x',
      '/api/v1/publishers',
      '/api/v1/artifacts',
      '/api/v1/versions?names=Hardened',
    ])('rejects an overflowing page on %s', async (path) => {
      for (const page of ['99999999999999999999', '1e20', '9007199254740993']) {
        const separator = path.includes('?') ? '&' : '?';
        const response = await registry.api.get(`${path}${separator}page=${page}`);
        expect([400, 422]).toContain(response.status);
        expect(response.body.code).toBeDefined();
      }
    });

    it.each([
      ['POST', '/api/v1/versions'],
      ['POST', '/api/v1/resolve'],
      ['POST', '/api/v1/resolve/check'],
      ['POST', '/api/v1/packages'],
      ['PATCH', '/api/v1/packages/Hardened'],
      ['POST', '/api/v1/auth/register-publisher'],
    ])('rejects JSON nested 2,000 deep on %s %s with 400', async (method, path) => {
      for (const body of [deep(2000), deepObject(2000), `{"names":${deep(2000)}}`]) {
        const response = await fetch(`${registry.baseUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.client.bearer}` },
          body,
        });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { code: string }).code).toBe('BAD_REQUEST');
      }
    });

    it('rejects a deeply nested multipart dependencies field with 422', async () => {
      const response = await uploadVersion(owner.client, 'Hardened', '3.0.0', {
        dependencies: `[${deep(2000)}]`,
      });
      expect(response.status).toBe(422);
    });

    it.each([
      ['PATCH', '/api/v1/packages/Hardened', { display_name: null }],
      ['PATCH', '/api/v1/packages/Hardened', { visibility: null }],
      ['PATCH', '/api/v1/packages/Hardened', { description: null }],
      ['POST', '/api/v1/resolve/check', { packages: [{ name: 'Hardened', version: '*' }], toolbox_version: null }],
      ['POST', '/api/v1/resolve', { packages: [{ name: 'Hardened', version: '*' }], toolbox_version: null }],
    ])('rejects null in an optional field on %s %s with 400/422', async (method, path, body) => {
      const response = await owner.client.request(method, path, body);
      expect([400, 422]).toContain(response.status);
      expect(response.body.code).toBeDefined();
    });
  });

  describe('signed download URLs', () => {
    it('stop working once the package turns private; the owner gets a fresh one that works', async () => {
      await createPackage(owner.client, 'Flipping');
      expect((await uploadVersion(owner.client, 'Flipping', '1.0.0')).status).toBe(201);
      const ticket = await registry.api.get('/api/v1/packages/Flipping/versions/1.0.0/download');
      expect(ticket.status).toBe(200);
      const url = ticket.body.url as string;
      expect((await fetch(url)).status).toBe(200);

      expect((await owner.client.patch('/api/v1/packages/Flipping', { visibility: 'private' })).status).toBe(200);
      const refused = await fetch(url);
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { code: string }).code).toBe('NOT_FOUND');

      const ownTicket = await owner.client.get('/api/v1/packages/Flipping/versions/1.0.0/download');
      expect(ownTicket.status).toBe(200);
      expect((await fetch(ownTicket.body.url as string)).status).toBe(200);
    });

    it('racing a delete answer 200 with the whole file or a JSON 404, never a 500 or a reset', async () => {
      const statuses = new Set<number>();
      for (let round = 0; round < 8; round += 1) {
        const name = `Racing${round}`;
        await createPackage(owner.client, name);
        const uploaded = await uploadVersion(owner.client, name, '1.0.0');
        expect(uploaded.status).toBe(201);
        const ticket = await registry.api.get(`/api/v1/packages/${name}/versions/1.0.0/download`);
        const url = ticket.body.url as string;
        const size = ticket.body.size as number;
        const downloads = Array.from({ length: 12 }, async (_, index) => {
          await new Promise((resolve) => setTimeout(resolve, index));
          const response = await fetch(url);
          const bytes = Buffer.from(await response.arrayBuffer());
          if (response.status === 200) expect(bytes.length).toBe(size);
          else expect(JSON.parse(bytes.toString()).code).toBe('NOT_FOUND');
          return response.status;
        });
        const removal = registry.as(ADMIN).delete(`/api/v1/packages/${name}`);
        for (const status of await Promise.all(downloads)) statuses.add(status);
        expect((await removal).status).toBeLessThan(300);
      }
      expect([...statuses].every((status) => status === 200 || status === 404)).toBe(true);
    });
  });

  describe('status codes of their own', () => {
    it('answers 415 UNSUPPORTED_MEDIA_TYPE for a body in an unsupported charset', async () => {
      const response = await fetch(`${registry.baseUrl}/api/v1/resolve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=klingon' },
        body: '{"packages":[]}',
      });
      expect(response.status).toBe(415);
      expect(((await response.json()) as { code: string }).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers a JSON 414 for an over-long URL and a JSON 431 for over-large headers', async () => {
      const longUrl = await fetch(`${registry.baseUrl}/api/v1/search?q=${'a'.repeat(10_000)}`);
      expect(longUrl.status).toBe(414);
      expect(((await longUrl.json()) as { code: string }).code).toBe('URI_TOO_LONG');
      const bigHeaders = await fetch(`${registry.baseUrl}/api/v1/packages`, {
        headers: { 'x-big': 'b'.repeat(20_000) },
      });
      expect(bigHeaders.status).toBe(431);
      expect(bigHeaders.headers.get('content-type')).toMatch(/application\/json/);
      expect(((await bigHeaders.json()) as { code: string }).code).toBe('HEADERS_TOO_LARGE');
      const hugeUrl = await fetch(`${registry.baseUrl}/api/v1/search?q=${'a'.repeat(40_000)}`);
      expect([414, 431]).toContain(hugeUrl.status);
      expect(((await hugeUrl.json()) as { code: string }).code).toMatch(/URI_TOO_LONG|HEADERS_TOO_LARGE/);
    });

    it('rejects an empty ZIP and a toolbox_version range no version can meet with 422', async () => {
      const empty = await uploadVersion(owner.client, 'Hardened', '4.0.0', {}, zipBuilder().build());
      expect(empty.status).toBe(422);
      expect(empty.body.code).toBe('ZIP_REJECTED');
      const impossible = await uploadVersion(owner.client, 'Hardened', '4.0.0', { toolbox_version: '>2.0.0 <1.0.0' });
      expect(impossible.status).toBe(422);
      expect(impossible.body.errors[0].field).toBe('toolbox_version');
      expect((await registry.api.get('/api/v1/packages/Hardened')).body.versions).toEqual([]);
    });
  });
});
