import { request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';
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

    it('are refused before the body is read when the caller does not own the package', async () => {
      const response = await uploadVersion(stranger.client, 'Hardened', '1.0.0');
      expect(response.status).toBe(403);
      const missing = await uploadVersion(owner.client, 'NoSuchPackage', '1.0.0');
      expect(missing.status).toBe(404);
      expect(await stagedFiles(registry.dataDir)).toEqual([]);
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
  });
});
