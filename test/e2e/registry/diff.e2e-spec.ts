import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { applyDelta } from '../../../src/modules/diff/delta/apply-delta.js';
import { ZipReader } from '../../../src/modules/diff/delta/zip-entries.js';
import { PackageDeltaEntity } from '../../../src/modules/diff/entities/package-delta.entity.js';
import { RegistryEvents } from '../../../src/modules/registry/registry-events.js';
import { StorageService } from '../../../src/storage/storage.service.js';
import { zipBuilder } from '../../fixtures/zip-builder.js';
import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN, createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Incompressible files shared by every version of a test package, so unchanged entries cost nothing in a delta. */
function baseFiles(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (let index = 1; index <= 12; index += 1)
    files.set(`assets/file-${String(index).padStart(2, '0')}.bin`, randomBytes(8 * 1024));
  return files;
}

function zipOf(files: Map<string, Buffer | string>): Buffer {
  const builder = zipBuilder().add('tb-mod.json', JSON.stringify({ name: 'diff-sample' }));
  for (const [name, content] of files) builder.add(name, content);
  return builder.build();
}

/** Version 1 and a version 2 with one file changed a little, one added and one removed. */
function twoVersions(): { v1: Buffer; v2: Buffer } {
  const files = baseFiles();
  const v1 = new Map<string, Buffer | string>([...files, ['old-only.txt', 'removed in 1.1.0']]);
  const changed = Buffer.from(files.get('assets/file-03.bin') as Buffer);
  changed.write('a small edit in the middle of the file', 4000);
  const v2 = new Map<string, Buffer | string>([
    ...files,
    ['assets/file-03.bin', changed],
    ['new-only.txt', 'added in 1.1.0'],
  ]);
  return { v1: zipOf(v1), v2: zipOf(v2) };
}

let packageCounter = 0;
const uniqueName = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(packageCounter += 1)}`;

interface Published {
  name: string;
  client: ApiClient;
  checksums: Record<string, string>;
  sizes: Record<string, number>;
}

async function publish(
  registry: RegistryUnderTest,
  prefix: string,
  zips: Record<string, Buffer>,
  extra: Record<string, unknown> = {},
): Promise<Published> {
  const { client } = await publisherFactory(registry);
  const name = uniqueName(prefix);
  await createPackage(client, name, extra);
  const checksums: Record<string, string> = {};
  const sizes: Record<string, number> = {};
  for (const [version, zip] of Object.entries(zips)) {
    const response = await uploadVersion(client, name, version, {}, zip);
    if (response.status !== 201)
      throw new Error(`upload ${version}: ${response.status} ${JSON.stringify(response.body)}`);
    checksums[version] = response.body.checksum_sha256;
    sizes[version] = response.body.size;
  }
  return { name, client, checksums, sizes };
}

/** Asks for diff info until it is ready, letting the queue work in between. */
async function pollInfo(registry: RegistryUnderTest, path: string, client: ApiClient = registry.api) {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const response = await client.get(path);
    if (response.status !== 202) return response;
    await registry.queue.whenIdle(20_000);
  }
  throw new Error(`${path} stayed pending`);
}

describe.each(backends())('diffs on $name', (backend) => {
  describe('generated on request (pre-generation off)', () => {
    let registry: RegistryUnderTest;

    beforeAll(async () => {
      registry = await startRegistry(backend, { DELTA_PREVIOUS_VERSIONS: '0' });
    });

    afterAll(async () => {
      await registry?.close();
    });

    describe('diff info', () => {
      it('returns the seed fields for two uploaded versions, built within the request', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Info', { '1.0.0': v1, '1.1.0': v2 });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({
          status: 'ready',
          package_name: pkg.name,
          from_version: '1.0.0',
          to_version: '1.1.0',
          format: 'tbdelta/1',
          full_size: pkg.sizes['1.1.0'],
          changed_files: 1,
          added_files: 1,
          deleted_files: 1,
          recommended: true,
        });
        expect(response.body.compression_ratio).toBeCloseTo(response.body.patch_size / response.body.full_size, 12);
        expect(response.body.compression_ratio).toBeLessThan(0.2);
        expect(response.body.patch_storage_path).toMatch(
          /^deltas\/[0-9a-f-]{36}\/1\.0\.0-1\.1\.0-[0-9a-f]{12}\.tbdelta$/,
        );
        expect(response.body.patch_checksum).toMatch(/^[0-9a-f]{64}$/);
        expect(response.body.patch_storage_path).toContain(response.body.patch_checksum.slice(0, 12));
        expect(response.body.created_at).toMatch(/Z$/);
        expect(response.body.download_url).toBe(
          `${registry.baseUrl}/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`,
        );
      });

      it('answers a second request from the stored delta without rebuilding it', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Again', { '1.0.0': v1, '1.1.0': v2 });
        const first = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const second = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        expect(second.status).toBe(200);
        expect(second.body.patch_checksum).toBe(first.body.patch_checksum);
        expect(second.body.created_at).toBe(first.body.created_at);
      });

      it('marks a delta that saves little as not recommended', async () => {
        const pkg = await publish(registry, 'Unrelated', { '1.0.0': zipOf(baseFiles()), '2.0.0': zipOf(baseFiles()) });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/2.0.0`);
        expect(response.status).toBe(200);
        expect(response.body.compression_ratio).toBeGreaterThan(0.8);
        expect(response.body.recommended).toBe(false);
      });

      it('refuses identical versions with 400', async () => {
        const { v1 } = twoVersions();
        const pkg = await publish(registry, 'Same', { '1.0.0': v1 });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.0.0`);
        expect(response.status).toBe(400);
        expect(response.body.detail).toMatch(/same version/);
      });

      it('answers 404 for an unknown version', async () => {
        const { v1 } = twoVersions();
        const pkg = await publish(registry, 'Unknown', { '1.0.0': v1 });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/9.9.9`);
        expect(response.status).toBe(404);
        expect(response.body.detail).toMatch(/9\.9\.9/);
      });

      it('answers 404 for an unknown package', async () => {
        const response = await registry.api.get('/api/v1/packages/no-such-package/diff/1.0.0/1.1.0');
        expect(response.status).toBe(404);
        expect(response.body.code).toBe('NOT_FOUND');
      });

      it('refuses a from version newer than the to version with 400', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Reversed', { '1.0.0': v1, '1.1.0': v2 });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.1.0/1.0.0`);
        expect(response.status).toBe(400);
        expect(response.body.detail).toMatch(/newer/);
      });

      it("hides a private package's diffs from others with 404 and shows them to the owner", async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Secret', { '1.0.0': v1, '1.1.0': v2 }, { visibility: 'private' });
        const stranger = await publisherFactory(registry);
        const path = `/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`;
        expect((await registry.api.get(path)).status).toBe(404);
        expect((await stranger.client.get(path)).status).toBe(404);
        expect((await pkg.client.get(path)).status).toBe(200);
        expect((await stranger.client.get(`${path}/download`)).status).toBe(404);
        expect((await registry.api.get(`${path}/download`)).status).toBe(404);
      });

      it('builds a delta from a yanked version when it is asked for exactly', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Yanked', { '1.0.0': v1, '1.1.0': v2 });
        expect(
          (await pkg.client.post(`/api/v1/packages/${pkg.name}/versions/1.0.0/yank`, { reason: 'broken' })).status,
        ).toBe(200);
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        expect(response.status).toBe(200);
        expect(response.body.from_version).toBe('1.0.0');
      });
    });

    describe('download', () => {
      it('answers 404 before the delta exists', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'NotYet', { '1.0.0': v1, '1.1.0': v2 });
        const response = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`);
        expect(response.status).toBe(404);
        expect(response.body.detail).toMatch(/does not exist yet/);
      });

      it('serves a patch that rebuilds the new version from the old one fetched from the registry', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Apply', { '1.0.0': v1, '1.1.0': v2 });
        const info = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const patch = await registry.api.get(info.body.download_url);
        expect(patch.status).toBe(200);
        expect(patch.headers.get('content-type')).toBe('application/octet-stream');
        expect(patch.bytes.length).toBe(info.body.patch_size);
        expect(sha256(patch.bytes)).toBe(info.body.patch_checksum);

        const oldFile = await registry.api.get(`/api/v1/packages/${pkg.name}/versions/1.0.0`);
        expect(sha256(oldFile.bytes)).toBe(pkg.checksums['1.0.0']);
        const directory = await mkdtemp(join(tmpdir(), 'tb-diff-e2e-'));
        try {
          await writeFile(join(directory, 'old.zip'), oldFile.bytes);
          await writeFile(join(directory, 'patch.tbdelta'), patch.bytes);
          const result = await applyDelta(
            join(directory, 'old.zip'),
            join(directory, 'patch.tbdelta'),
            join(directory, 'new.zip'),
          );
          expect(result.byteIdentical).toBe(info.body.exact_rebuild);
          if (result.byteIdentical) {
            expect(sha256(await readFile(join(directory, 'new.zip')))).toBe(pkg.checksums['1.1.0']);
          } else {
            await writeFile(join(directory, 'expected.zip'), v2);
            expect(await entryContents(join(directory, 'new.zip'))).toEqual(
              await entryContents(join(directory, 'expected.zip')),
            );
          }
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      });

      it('sends the ETag and X-Patch-Checksum headers and answers 304 to a matching If-None-Match', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Etag', { '1.0.0': v1, '1.1.0': v2 });
        const info = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const path = `/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`;
        const first = await registry.api.get(path);
        expect(first.headers.get('etag')).toBe(`"${info.body.patch_checksum}"`);
        expect(first.headers.get('x-patch-checksum')).toBe(info.body.patch_checksum);
        const again = await registry.api.get(path, { 'if-none-match': first.headers.get('etag') as string });
        expect(again.status).toBe(304);
        expect(again.bytes.length).toBe(0);
      });

      it('serves a byte range of the patch with 206', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Range', { '1.0.0': v1, '1.1.0': v2 });
        await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const path = `/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`;
        const whole = await registry.api.get(path);
        const part = await registry.api.get(path, { range: 'bytes=0-7' });
        expect(part.status).toBe(206);
        expect(part.headers.get('content-range')).toBe(`bytes 0-7/${whole.bytes.length}`);
        expect(part.bytes.toString('latin1')).toBe('TBDELTA1');
        const tail = await registry.api.get(path, { range: 'bytes=-32' });
        expect(tail.status).toBe(206);
        expect(tail.bytes.equals(whole.bytes.subarray(whole.bytes.length - 32))).toBe(true);
      });
    });

    describe('create', () => {
      it('queues the delta (202 with a job id) and answers 200 with diff info once it exists', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Create', { '1.0.0': v1, '1.1.0': v2 });
        const queued = await pkg.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.1.0',
        });
        expect(queued.status).toBe(202);
        expect(queued.body).toMatchObject({ status: 'pending', from_version: '1.0.0', to_version: '1.1.0' });
        expect(typeof queued.body.job_id).toBe('string');
        expect(queued.body.job_id.length).toBeGreaterThan(0);
        expect(await registry.queue.whenIdle(30_000)).toBe(true);
        const done = await pkg.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.1.0',
        });
        expect(done.status).toBe(200);
        expect(done.body).toMatchObject({ status: 'ready', package_name: pkg.name, changed_files: 1 });
        expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`)).status).toBe(200);
      });

      it('takes the versions as query parameters as well', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'CreateQuery', { '1.0.0': v1, '1.1.0': v2 });
        const queued = await pkg.client.post(
          `/api/v1/packages/${pkg.name}/diff/create?from_version=1.0.0&to_version=1.1.0&force=false`,
        );
        expect(queued.status).toBe(202);
        expect(queued.body.status).toBe('pending');
        await registry.queue.whenIdle(30_000);
        expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`)).status).toBe(200);
      });

      it('rebuilds an existing delta when forced and removes the replaced patch', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Force', { '1.0.0': v1, '1.1.0': v2 });
        const before = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const forced = await pkg.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.1.0',
          force: true,
        });
        expect(forced.status).toBe(202);
        expect(await registry.queue.whenIdle(30_000)).toBe(true);
        const after = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        expect(after.body.patch_storage_path).not.toBe(before.body.patch_storage_path);
        const storage = registry.app.get(StorageService);
        expect(await storage.stat(before.body.patch_storage_path)).toBeNull();
        expect(await storage.stat(after.body.patch_storage_path)).not.toBeNull();
      });

      it('lets an admin create a delta of any package', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'AdminCreate', { '1.0.0': v1, '1.1.0': v2 });
        const response = await registry
          .as(ADMIN)
          .post(`/api/v1/packages/${pkg.name}/diff/create`, { from_version: '1.0.0', to_version: '1.1.0' });
        expect(response.status).toBe(202);
      });

      it('refuses a user who is not the publisher with 403', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'NotYours', { '1.0.0': v1, '1.1.0': v2 });
        const stranger = await publisherFactory(registry);
        const response = await stranger.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.1.0',
        });
        expect(response.status).toBe(403);
        expect(response.body.code).toBe('FORBIDDEN');
      });

      it("answers 404 to others for a private package's create", async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'PrivCreate', { '1.0.0': v1, '1.1.0': v2 }, { visibility: 'private' });
        const stranger = await publisherFactory(registry);
        const response = await stranger.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.1.0',
        });
        expect(response.status).toBe(404);
      });

      it('requires authentication (401)', async () => {
        const response = await registry.api.post('/api/v1/packages/anything/diff/create', {
          from_version: '1.0.0',
          to_version: '1.1.0',
        });
        expect(response.status).toBe(401);
      });

      it('refuses a request without both versions with 422 naming the missing field', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Missing', { '1.0.0': v1, '1.1.0': v2 });
        const response = await pkg.client.post(`/api/v1/packages/${pkg.name}/diff/create`, { from_version: '1.0.0' });
        expect(response.status).toBe(422);
        expect(response.body.errors).toEqual([{ field: 'to_version', message: 'to_version is required' }]);
      });

      it('refuses identical versions with 400', async () => {
        const { v1 } = twoVersions();
        const pkg = await publish(registry, 'CreateSame', { '1.0.0': v1 });
        const response = await pkg.client.post(`/api/v1/packages/${pkg.name}/diff/create`, {
          from_version: '1.0.0',
          to_version: '1.0.0',
        });
        expect(response.status).toBe(400);
      });
    });

    describe('removal', () => {
      it('removes every delta row and stored patch when the package is deleted', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'Doomed', { '1.0.0': v1, '1.1.0': v2 });
        const info = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const storage = registry.app.get(StorageService);
        expect(await storage.stat(info.body.patch_storage_path)).not.toBeNull();
        expect((await registry.as(ADMIN).delete(`/api/v1/packages/${pkg.name}`)).status).toBe(204);
        expect(await registry.queue.whenIdle(20_000)).toBe(true);
        expect(await storage.stat(info.body.patch_storage_path)).toBeNull();
        const packageId = info.body.patch_storage_path.split('/')[1];
        expect(await registry.app.get(DataSource).getRepository(PackageDeltaEntity).countBy({ packageId })).toBe(0);
        expect((await registry.api.get(info.body.download_url)).status).toBe(404);
      });

      it('removes the deltas touching a version when the registry announces its removal', async () => {
        const { v1, v2 } = twoVersions();
        const pkg = await publish(registry, 'VersionGone', { '1.0.0': v1, '1.1.0': v2, '1.2.0': v2 });
        const touching = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`);
        const other = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.2.0`);
        const packageId = touching.body.patch_storage_path.split('/')[1];
        await registry.app.get(RegistryEvents).emit('versionRemoved', { packageId, version: '1.1.0' });
        expect(await registry.queue.whenIdle(20_000)).toBe(true);
        const storage = registry.app.get(StorageService);
        expect(await storage.stat(touching.body.patch_storage_path)).toBeNull();
        expect(await storage.stat(other.body.patch_storage_path)).not.toBeNull();
        expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0/download`)).status).toBe(404);
      });
    });
  });

  describe('queued (inline limit 1 byte, pre-generation from 3 versions)', () => {
    let registry: RegistryUnderTest;

    beforeAll(async () => {
      registry = await startRegistry(backend, { DELTA_INLINE_MAX_BYTES: '1' });
    });

    afterAll(async () => {
      await registry?.close();
    });

    it('answers 202 pending with a job id for files over the inline limit, then 200 once the job ran', async () => {
      const { v1, v2 } = twoVersions();
      const pkg = await publish(registry, 'Pending', {
        '1.0.0': v1,
        '1.0.1': v1,
        '1.0.2': v1,
        '1.0.3': v1,
        '1.1.0': v2,
      });
      // 1.0.0 → 1.1.0 is four versions back: pre-generation (3) leaves it out.
      const path = `/api/v1/packages/${pkg.name}/diff/1.0.0/1.1.0`;
      const first = await registry.api.get(path);
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({
        status: 'pending',
        package_name: pkg.name,
        from_version: '1.0.0',
        to_version: '1.1.0',
      });
      expect(typeof first.body.job_id).toBe('string');
      expect(first.headers.get('retry-after')).toBe('2');
      const ready = await pollInfo(registry, path);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ready', changed_files: 1, recommended: true });
    });

    it('pre-generates deltas from the previous three versions after an upload', async () => {
      const { v1, v2 } = twoVersions();
      const pkg = await publish(registry, 'Pregen', {
        '1.0.0': v1,
        '1.1.0': v1,
        '1.2.0': v1,
        '1.3.0': v1,
        '1.4.0': v2,
      });
      expect(await registry.queue.whenIdle(30_000)).toBe(true);
      for (const from of ['1.1.0', '1.2.0', '1.3.0']) {
        expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/${from}/1.4.0/download`)).status).toBe(200);
      }
      // Ready without any generation: over the inline limit it would otherwise be 202.
      const info = await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.3.0/1.4.0`);
      expect(info.status).toBe(200);
      expect(info.body.changed_files).toBe(1);
      expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.4.0/download`)).status).toBe(404);
    });

    it('never pre-generates a delta from a yanked version', async () => {
      const { v1, v2 } = twoVersions();
      const pkg = await publish(registry, 'PregenYank', { '1.0.0': v1, '1.1.0': v1 });
      expect(
        (await pkg.client.post(`/api/v1/packages/${pkg.name}/versions/1.1.0/yank`, { reason: 'bad build' })).status,
      ).toBe(200);
      expect((await uploadVersion(pkg.client, pkg.name, '1.2.0', {}, v2)).status).toBe(201);
      expect(await registry.queue.whenIdle(30_000)).toBe(true);
      expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.1.0/1.2.0/download`)).status).toBe(404);
      expect((await registry.api.get(`/api/v1/packages/${pkg.name}/diff/1.0.0/1.2.0/download`)).status).toBe(200);
    });
  });
});

/** Path → SHA-256 of the content, for comparing archives that are equivalent but not byte-identical. */
async function entryContents(path: string): Promise<Record<string, string>> {
  const reader = await ZipReader.open(path, 'archive');
  try {
    const contents: Record<string, string> = {};
    for (const info of reader.listing.entries) contents[info.path] = sha256(await reader.readContent(info));
    return contents;
  } finally {
    await reader.close();
  }
}
