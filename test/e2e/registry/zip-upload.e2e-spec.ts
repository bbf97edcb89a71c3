import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';
import { zipBuilder } from '../../fixtures/zip-builder.js';

async function listFiles(directory: string): Promise<string[]> {
  try {
    const entries = await readdir(directory, { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

/** Upload staging: what readMultipart leaves under DATA_DIR/tmp (nothing, once a request is answered). */
async function stagingEntries(dataDir: string): Promise<string[]> {
  try {
    return await readdir(join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

describe.each(backends())('uploaded ZIP checks on $name', (backend) => {
  let registry: RegistryUnderTest;
  let client: Awaited<ReturnType<typeof publisherFactory>>['client'];

  beforeAll(async () => {
    registry = await startRegistry(backend, { UPLOAD_MAX_BYTES: String(2 * 1024 * 1024) });
    ({ client } = await publisherFactory(registry));
    await createPackage(client, 'ZipTarget');
  });

  afterAll(async () => {
    await registry?.close();
  });

  const rejections: Array<[string, () => Buffer, RegExp]> = [
    ['not a ZIP', () => Buffer.from('plain text, no archive here'), /not a ZIP|zip/i],
    ['an absolute path', () => zipBuilder().addRaw('/etc/passwd', 'x').build(), /\/etc\/passwd/],
    ['a drive letter', () => zipBuilder().addRaw('C:/windows/x.dll', 'x').build(), /C:/],
    ['a .. segment', () => zipBuilder().addRaw('a/../../evil.txt', 'x').build(), /\.\./],
    ['a backslash', () => zipBuilder().addRaw('dir\\file.txt', 'x').build(), /dir/],
    ['a NUL character', () => zipBuilder().addRaw('bad\u0000name.txt', 'x').build(), /bad/],
    ['a control character', () => zipBuilder().addRaw('bell\u0007.txt', 'x').build(), /bell/],
    [
      'a name longer than 255',
      () =>
        zipBuilder()
          .add(`${'n'.repeat(256)}.txt`, 'x')
          .build(),
      /nnnn/,
    ],
    [
      'case-insensitive duplicates',
      () => zipBuilder().add('Readme.md', 'a').add('README.md', 'b').build(),
      /README\.md|Readme\.md/,
    ],
    ['a symlink', () => zipBuilder().add('ok.txt', 'x').withSymlink('evil-link', '/etc/passwd').build(), /evil-link/],
    ['a device file', () => zipBuilder().withSpecialFile('dev-null', 'characterDevice').build(), /dev-null/],
    ['an encrypted entry', () => zipBuilder().withEncryptedEntry('secret.txt').build(), /secret\.txt/],
    ['an unsupported compression method', () => zipBuilder().withMethod('lzma.bin', 14).build(), /lzma\.bin/],
    ['a lying declared size', () => zipBuilder().withLyingSize('liar.txt', 'x'.repeat(5000), 10).build(), /liar\.txt/],
    [
      'a per-entry ratio above 100',
      () =>
        zipBuilder()
          .addZeros('zeros.bin', 8 * 1024 * 1024)
          .build(),
      /zeros\.bin/,
    ],
  ];

  it.each(rejections)(
    'rejects %s with 422 ZIP_REJECTED naming the entry and stores nothing',
    async (_case, build, entryPattern) => {
      const objectsBefore = await listFiles(join(registry.dataDir, 'objects'));
      const response = await uploadVersion(client, 'ZipTarget', '1.0.0', {}, build());
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('ZIP_REJECTED');
      expect(response.body.detail).toMatch(entryPattern);
      expect(await listFiles(join(registry.dataDir, 'objects'))).toEqual(objectsBefore);
      expect((await registry.api.get('/api/v1/packages/ZipTarget')).body.versions).toEqual([]);
      expect(await stagingEntries(registry.dataDir)).toEqual([]);
    },
  );

  it('leaves no staged upload behind after a rejection', async () => {
    const response = await uploadVersion(
      client,
      'ZipTarget',
      '1.0.0',
      {},
      zipBuilder().withSymlink('link', '/').build(),
    );
    expect(response.status).toBe(422);
    expect(await stagingEntries(registry.dataDir)).toEqual([]);
  });

  it('rejects more entries than the configured limit', async () => {
    const small = await startRegistry(backend, { ZIP_MAX_ENTRIES: '10' });
    try {
      const owner = await publisherFactory(small);
      await createPackage(owner.client, 'ManyEntries');
      const builder = zipBuilder();
      for (let index = 0; index < 11; index += 1) builder.add(`f${index}.txt`, `${index}`);
      const response = await uploadVersion(owner.client, 'ManyEntries', '1.0.0', {}, builder.build());
      expect(response.status).toBe(422);
      expect(response.body.detail).toMatch(/11|entries/);
    } finally {
      await small.close();
    }
  });

  it('rejects a total uncompressed size over the configured limit', async () => {
    const small = await startRegistry(backend, { ZIP_MAX_UNCOMPRESSED_BYTES: String(64 * 1024) });
    try {
      const owner = await publisherFactory(small);
      await createPackage(owner.client, 'TooBig');
      const zip = zipBuilder()
        .addRandom('a.bin', 40 * 1024)
        .addRandom('b.bin', 40 * 1024)
        .build();
      const response = await uploadVersion(owner.client, 'TooBig', '1.0.0', {}, zip);
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('ZIP_REJECTED');
    } finally {
      await small.close();
    }
  });

  it('answers 413 for an upload over the size cap and stores nothing', async () => {
    const objectsBefore = await listFiles(join(registry.dataDir, 'objects'));
    const big = zipBuilder()
      .addRandom('big.bin', 3 * 1024 * 1024)
      .build();
    const response = await uploadVersion(client, 'ZipTarget', '1.0.0', {}, big);
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await listFiles(join(registry.dataDir, 'objects'))).toEqual(objectsBefore);
    expect(await stagingEntries(registry.dataDir)).toEqual([]);
  });

  it('accepts a clean archive with directories', async () => {
    const zip = zipBuilder().withDirectory('src/').add('src/a.js', 'export {}').add('README.md', '# hi').build();
    const response = await uploadVersion(client, 'ZipTarget', '1.0.0', {}, zip);
    expect(response.status).toBe(201);
    expect(await stagingEntries(registry.dataDir)).toEqual([]);
  });
});
