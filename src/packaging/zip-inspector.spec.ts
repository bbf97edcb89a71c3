import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { PlatformError } from '../common/errors.js';
import { buildManyEntries, zipBuilder } from '../../test/fixtures/zip-builder.js';
import type { ZipBuilder } from '../../test/fixtures/zip-builder.js';
import { DEFAULT_ZIP_LIMITS, ZipInspector, inspectZip } from './zip-inspector.js';
import type { ZipInspection, ZipLimits } from './zip-inspector.js';

const MEBIBYTE = 1024 * 1024;

let directory: string;
let archiveNumber = 0;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'zip-inspector-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function writeArchive(content: ZipBuilder | Buffer | string): Promise<string> {
  const path = join(directory, `archive-${++archiveNumber}.zip`);
  if (typeof content === 'string' || Buffer.isBuffer(content)) await writeFile(path, content);
  else await content.writeTo(path);
  return path;
}

async function inspect(content: ZipBuilder | Buffer | string, limits?: Partial<ZipLimits>): Promise<ZipInspection> {
  return inspectZip(await writeArchive(content), limits);
}

async function rejectionOf(content: ZipBuilder | Buffer | string, limits?: Partial<ZipLimits>): Promise<PlatformError> {
  const path = await writeArchive(content);
  try {
    await inspectZip(path, limits);
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error('expected the archive to be rejected');
}

function rejectedWith(fragment: string): object {
  return { code: 'ZIP_REJECTED', status: 422, message: expect.stringContaining(fragment) };
}

describe('ZipInspector', () => {
  describe('accepted archives', () => {
    it('summarizes a normal archive with its entries, sizes and CRCs', async () => {
      const inspection = await inspect(
        zipBuilder()
          .add('README.md', '# Hello\n'.repeat(50))
          .addStored('bin/tool', Buffer.from([1, 2, 3, 4])),
      );
      expect(inspection).toEqual({
        entryCount: 2,
        fileCount: 2,
        totalUncompressedBytes: 404,
        totalCompressedBytes: expect.any(Number),
        entries: [
          {
            name: 'README.md',
            isDirectory: false,
            size: 400,
            compressedSize: expect.any(Number),
            crc32: zlib.crc32('# Hello\n'.repeat(50)),
          },
          {
            name: 'bin/tool',
            isDirectory: false,
            size: 4,
            compressedSize: 4,
            crc32: zlib.crc32(Buffer.from([1, 2, 3, 4])),
          },
        ],
      });
      expect(inspection.totalCompressedBytes).toBeLessThan(100);
    });

    it('accepts directory entries and counts only files as files', async () => {
      const inspection = await inspect(
        zipBuilder().withDirectory('mod/').withDirectory('mod/assets/').add('mod/main.py', 'x'),
      );
      expect(inspection).toMatchObject({ entryCount: 3, fileCount: 1 });
      expect(inspection.entries.map((entry) => entry.isDirectory)).toEqual([true, true, false]);
    });

    it('accepts an empty archive with no entries', async () => {
      const inspection = await inspect(zipBuilder());
      expect(inspection).toEqual({
        entryCount: 0,
        fileCount: 0,
        totalUncompressedBytes: 0,
        totalCompressedBytes: 0,
        entries: [],
      });
    });

    it('accepts UTF-8 names flagged as such', async () => {
      const inspection = await inspect(zipBuilder().add('données/über.txt', 'ü'));
      expect(inspection.entries[0].name).toBe('données/über.txt');
    });

    it('accepts a name of exactly 255 characters', async () => {
      const inspection = await inspect(zipBuilder().add('a'.repeat(255), 'x'));
      expect(inspection.entries[0].name).toHaveLength(255);
    });

    it('accepts empty files, stored and deflated', async () => {
      const inspection = await inspect(zipBuilder().addStored('empty-stored', '').add('empty-deflated', ''));
      expect(inspection.entries.map((entry) => entry.size)).toEqual([0, 0]);
    });

    it('accepts a highly compressible entry at the 1 MiB ratio floor', async () => {
      const inspection = await inspect(zipBuilder().addZeros('padding.bin', MEBIBYTE));
      expect(inspection.entries[0].size / inspection.entries[0].compressedSize).toBeGreaterThan(
        DEFAULT_ZIP_LIMITS.maxEntryRatio,
      );
    });

    it('accepts a compressible archive below the archive-ratio threshold', async () => {
      const builder = zipBuilder();
      for (let index = 0; index < 3; index++) builder.addZeros(`zeros-${index}.bin`, MEBIBYTE);
      const inspection = await inspect(builder, { archiveRatioThresholdBytes: 4 * MEBIBYTE });
      expect(inspection.totalUncompressedBytes).toBe(3 * MEBIBYTE);
    });

    it('accepts exactly the maximum number of entries', async () => {
      const inspection = await inspect(buildManyEntries(20), { maxEntries: 20 });
      expect(inspection.fileCount).toBe(20);
    });

    it('accepts incompressible content, stored and deflated', async () => {
      const inspection = await inspect(
        zipBuilder()
          .addRandom('photo.jpg', 3 * MEBIBYTE + 7)
          .addRandom('raw.bin', 200_000, { deflate: false }),
      );
      expect(inspection.totalUncompressedBytes).toBe(3 * MEBIBYTE + 7 + 200_000);
    });

    it('inspects a 100 MiB incompressible archive', async () => {
      const builder = zipBuilder();
      for (let index = 0; index < 50; index++)
        builder.addRandom(`blob-${index}.bin`, 2 * MEBIBYTE, { deflate: index % 2 === 0 });
      const inspection = await inspect(builder);
      expect(inspection).toMatchObject({ fileCount: 50, totalUncompressedBytes: 100 * MEBIBYTE });
    });

    it('inspects several archives at once with one inspector', async () => {
      const inspector = new ZipInspector();
      const [first, second] = await Promise.all([
        writeArchive(zipBuilder().addRandom('a.bin', 3 * MEBIBYTE)),
        writeArchive(
          zipBuilder()
            .addRandom('b.bin', 2 * MEBIBYTE, { deflate: false })
            .add('c.txt', 'c'),
        ),
      ]);
      const results = await Promise.all([inspector.inspect(first), inspector.inspect(second)]);
      expect(results.map((result) => result.totalUncompressedBytes)).toEqual([3 * MEBIBYTE, 2 * MEBIBYTE + 1]);
    });

    it('applies limits given to the class constructor over the defaults', async () => {
      const inspector = new ZipInspector({ maxEntries: 1 });
      expect(inspector.limits).toEqual({ ...DEFAULT_ZIP_LIMITS, maxEntries: 1 });
      await expect(inspector.inspect(await writeArchive(buildManyEntries(2)))).rejects.toMatchObject(
        rejectedWith('has 2 entries; the limit is 1'),
      );
    });
  });

  describe('archives that are not ZIPs', () => {
    it('rejects a text file', async () => {
      expect(await rejectionOf('just some text, not an archive')).toMatchObject(rejectedWith('Not a ZIP archive'));
    });

    it('rejects an empty file', async () => {
      expect(await rejectionOf(Buffer.alloc(0))).toMatchObject(rejectedWith('Not a ZIP archive'));
    });

    it('rejects an archive cut short before its central directory ends', async () => {
      const archive = zipBuilder().add('a.txt', 'hello').add('b.txt', 'world').build();
      expect(await rejectionOf(archive.subarray(0, archive.length - 10))).toMatchObject(
        rejectedWith('Not a ZIP archive'),
      );
    });

    it('rejects an archive whose entry data is missing from the file', async () => {
      const archive = zipBuilder().addRandom('payload.bin', 4096, { deflate: false }).build();
      // Drop part of the data but keep the central directory and end record intact.
      const centralDirectoryOffset = archive.readUInt32LE(archive.length - 6);
      const damaged = Buffer.concat([archive.subarray(0, 1000), archive.subarray(centralDirectoryOffset)]);
      damaged.writeUInt32LE(1000, damaged.length - 6);
      expect(await rejectionOf(damaged)).toMatchObject(rejectedWith('"payload.bin" runs past the end of the file'));
    });

    it('rejects a stored entry whose bytes fail the CRC check', async () => {
      const archive = zipBuilder().addStored('data.txt', 'hello, world').build();
      archive[30 + 'data.txt'.length] ^= 0xff;
      expect(await rejectionOf(archive)).toMatchObject(rejectedWith('"data.txt" fails its CRC-32 check'));
    });

    it('rejects an entry that declares a wrong CRC', async () => {
      expect(await rejectionOf(zipBuilder().add('data.txt', 'hello', { crc32: 1234 }))).toMatchObject(
        rejectedWith('"data.txt" fails its CRC-32 check'),
      );
    });

    it('rejects deflate data that does not inflate', async () => {
      const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
      expect(
        await rejectionOf(zipBuilder().addRaw('broken.txt', garbage, { compress: false, method: 8, declaredSize: 10 })),
      ).toMatchObject(rejectedWith('"broken.txt" is corrupt'));
    });

    it('rejects a deflate stream cut short', async () => {
      const content = Buffer.alloc(100_000, 'a');
      const deflated = zlib.deflateRawSync(content);
      const builder = zipBuilder().addRaw('cut.txt', deflated.subarray(0, deflated.length - 3), {
        compress: false,
        method: 8,
        declaredSize: content.length,
        crc32: zlib.crc32(content),
      });
      expect(await rejectionOf(builder)).toMatchObject(
        rejectedWith('ZIP entry "cut.txt" is corrupt: unexpected end of file'),
      );
    });
  });

  describe('entry names', () => {
    it.each([
      ['an absolute path', '/etc/passwd', 'has an absolute path'],
      ['a drive letter', 'C:/Windows/win.ini', 'has a drive letter'],
      ['a drive-relative path', 'C:evil.txt', 'has a drive letter'],
      ['a leading ".." segment', '../evil.txt', 'has a ".." path segment'],
      ['a ".." segment deeper in the path', 'mod/../../evil.txt', 'has a ".." path segment'],
      ['a trailing ".." segment', 'mod/..', 'has a ".." path segment'],
      ['a backslash', 'mod\\evil.txt', 'has a backslash in its name'],
      ['a backslash traversal', '..\\..\\evil.txt', 'has a backslash in its name'],
      ['a NUL character', 'evil.txt\u0000.png', 'has a NUL character in its name'],
      ['a newline', 'evil\n.txt', 'has a control character in its name'],
      ['a C1 control character', 'evil\u0085.txt', 'has a control character in its name'],
      ['more than 255 characters', `${'a'.repeat(256)}`, 'has a name longer than 255 characters'],
      ['an empty name', '', 'has an empty name'],
    ])('rejects a name with %s', async (_case, name, reason) => {
      expect(await rejectionOf(zipBuilder().add('fine.txt', 'ok').addRaw(name, 'x'))).toMatchObject(
        rejectedWith(`ZIP entry ${JSON.stringify(name)} ${reason}`),
      );
    });

    it('rejects a control byte in a name that is not flagged as UTF-8', async () => {
      const name = Buffer.from('bell\u0007.txt', 'latin1');
      expect(await rejectionOf(zipBuilder().addRaw(name, 'x'))).toMatchObject(
        rejectedWith('ZIP entry "bell\\u0007.txt" has a control character in its name'),
      );
    });

    it('rejects a name flagged as UTF-8 that is not valid UTF-8', async () => {
      const name = Buffer.from([0x61, 0xff, 0xfe, 0x62]);
      expect(await rejectionOf(zipBuilder().addRaw(name, 'x', { flags: 0x0800 }))).toMatchObject(
        rejectedWith('has a name that is not valid UTF-8'),
      );
    });

    it('rejects names that differ only in case', async () => {
      expect(await rejectionOf(zipBuilder().add('README.md', 'a').add('readme.MD', 'b'))).toMatchObject(
        rejectedWith('ZIP entry "readme.MD" duplicates "README.md"'),
      );
    });

    it('rejects names that differ only by "." segments or repeated slashes', async () => {
      expect(await rejectionOf(zipBuilder().add('mod/main.py', 'a').add('mod/./main.py', 'b'))).toMatchObject(
        rejectedWith('ZIP entry "mod/./main.py" duplicates "mod/main.py"'),
      );
    });

    it('rejects a directory entry that duplicates a file', async () => {
      expect(await rejectionOf(zipBuilder().add('assets', 'a').withDirectory('Assets/'))).toMatchObject(
        rejectedWith('ZIP entry "Assets/" duplicates "assets"'),
      );
    });

    it('rejects an entry placed inside a path that another entry makes a file', async () => {
      expect(await rejectionOf(zipBuilder().add('config', 'a').add('config/settings.json', '{}'))).toMatchObject(
        rejectedWith('ZIP entry "config/settings.json" lies inside "config", which is a file'),
      );
    });

    it('rejects an entry whose local header carries a different name', async () => {
      expect(await rejectionOf(zipBuilder().add('harmless.txt', 'x', { localName: '../evil.txt' }))).toMatchObject(
        rejectedWith('ZIP entry "harmless.txt" has a different name in its local header: "../evil.txt"'),
      );
    });
  });

  describe('entry types and encodings', () => {
    it('rejects a symbolic link', async () => {
      expect(await rejectionOf(zipBuilder().add('a.txt', 'x').withSymlink('evil', '/etc/passwd'))).toMatchObject(
        rejectedWith('ZIP entry "evil" is a symbolic link'),
      );
    });

    it.each([
      ['fifo', 'a FIFO'],
      ['characterDevice', 'a character device'],
      ['blockDevice', 'a block device'],
      ['socket', 'a socket'],
    ] as const)('rejects a %s entry', async (type, description) => {
      expect(await rejectionOf(zipBuilder().withSpecialFile('dev/thing', type))).toMatchObject(
        rejectedWith(`ZIP entry "dev/thing" is ${description}`),
      );
    });

    it('rejects a directory-typed entry whose name lacks the trailing slash', async () => {
      expect(
        await rejectionOf(zipBuilder().addRaw('folder', '', { compress: false, unixMode: 0o040755 })),
      ).toMatchObject(rejectedWith('ZIP entry "folder" is a directory whose name does not end in "/"'));
    });

    it('rejects a directory entry that carries content', async () => {
      expect(await rejectionOf(zipBuilder().addStored('folder/', 'hidden payload'))).toMatchObject(
        rejectedWith('ZIP entry "folder/" is a directory with 14 bytes of content'),
      );
    });

    it('rejects an encrypted entry', async () => {
      expect(await rejectionOf(zipBuilder().add('a.txt', 'x').withEncryptedEntry('secret.txt'))).toMatchObject(
        rejectedWith('ZIP entry "secret.txt" is encrypted'),
      );
    });

    it.each([
      [14, 'LZMA'],
      [12, 'bzip2'],
      [93, 'zstd'],
      [9, 'deflate64'],
    ])('rejects compression method %i (%s)', async (method) => {
      expect(await rejectionOf(zipBuilder().withMethod('x.bin', method))).toMatchObject(
        rejectedWith(`ZIP entry "x.bin" uses compression method ${method}`),
      );
    });

    it('rejects a local header whose compression method differs from the central directory', async () => {
      expect(await rejectionOf(zipBuilder().add('a.txt', 'hello', { localMethod: 0 }))).toMatchObject(
        rejectedWith('ZIP entry "a.txt" has a local header whose compression or encryption differs'),
      );
    });
  });

  describe('sizes and ratios', () => {
    it('rejects more entries than the default limit of 50,000', async () => {
      expect(await rejectionOf(buildManyEntries(50_001))).toMatchObject(
        rejectedWith('has 50001 entries; the limit is 50000'),
      );
    });

    it('rejects a declared total uncompressed size over the limit, naming the entry that crosses it', async () => {
      const builder = zipBuilder().addRandom('one.bin', 600).addRandom('two.bin', 600);
      expect(await rejectionOf(builder, { maxTotalUncompressedBytes: 1000 })).toMatchObject(
        rejectedWith('ZIP entry "two.bin" takes the declared uncompressed size to 1200 bytes; the limit is 1000'),
      );
    });

    it('rejects a 600 MiB zip bomb of zeros before inflating it', async () => {
      const started = Date.now();
      const error = await rejectionOf(
        zipBuilder()
          .add('mod.py', 'print(1)')
          .addZeros('bomb.bin', 600 * MEBIBYTE),
      );
      expect(error).toMatchObject(rejectedWith('ZIP entry "bomb.bin" has a compression ratio of'));
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('rejects the declared total of many small high-ratio entries past 512 MiB', async () => {
      const builder = zipBuilder();
      for (let index = 0; index < 513; index++) builder.addZeros(`part-${index}.bin`, MEBIBYTE);
      expect(await rejectionOf(builder)).toMatchObject(
        rejectedWith(`ZIP entry "part-512.bin" takes the declared uncompressed size to ${513 * MEBIBYTE} bytes`),
      );
    });

    it('rejects an entry above the ratio floor whose ratio exceeds 100', async () => {
      expect(await rejectionOf(zipBuilder().addZeros('zeros.bin', 2 * MEBIBYTE))).toMatchObject(
        rejectedWith('ZIP entry "zeros.bin" has a compression ratio of'),
      );
    });

    it('applies the entry ratio limit given in the limits', async () => {
      // Words in pseudo-random order compress a few times over: fine by default, too much for a limit of 2.
      const words = ['package', 'registry', 'version', 'module', 'archive', 'upload', 'checksum', 'publisher'];
      let seed = 1;
      const text = Array.from({ length: 250_000 }, () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return words[(seed >>> 16) % words.length];
      }).join(' ');
      const builder = zipBuilder().add('text.txt', text);
      expect((await inspect(builder)).fileCount).toBe(1);
      expect(await rejectionOf(builder, { maxEntryRatio: 2 })).toMatchObject({
        message: expect.stringMatching(/^ZIP entry "text.txt" has a compression ratio of \d+ .*; the limit is 2$/),
      });
    });

    it('rejects an archive whose overall ratio exceeds 50 once it passes 64 MiB', async () => {
      const builder = zipBuilder();
      for (let index = 0; index < 70; index++) builder.addZeros(`chunk-${index}.bin`, MEBIBYTE);
      expect(await rejectionOf(builder)).toMatchObject(rejectedWith('The ZIP archive expands'));
    });

    it('names the entry contributing most to an archive ratio violation', async () => {
      const builder = zipBuilder().addRandom('noise.bin', 1000);
      for (let index = 0; index < 5; index++)
        builder.addZeros(`chunk-${index}.bin`, Math.floor(MEBIBYTE / (index + 1)));
      expect(await rejectionOf(builder, { archiveRatioThresholdBytes: 2 * MEBIBYTE })).toMatchObject(
        rejectedWith('ZIP entry "chunk-0.bin" contributes most'),
      );
    });

    it('rejects an entry that inflates to more than it declares, without inflating all of it', async () => {
      const started = Date.now();
      // Declaring 1 KiB keeps the entry under every size and ratio rule: only inflating catches it.
      const error = await rejectionOf(zipBuilder().addZeros('bomb.bin', 600 * MEBIBYTE, { declaredSize: 1024 }));
      expect(error).toMatchObject(
        rejectedWith('ZIP entry "bomb.bin" inflates to more than the 1024 bytes it declares'),
      );
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('rejects a deflated entry that inflates to fewer bytes than it declares', async () => {
      expect(await rejectionOf(zipBuilder().withLyingSize('short.txt', 'x'.repeat(10_000), 20_000))).toMatchObject(
        rejectedWith('ZIP entry "short.txt" inflates to 10000 bytes but declares 20000'),
      );
    });

    it('rejects a deflated entry that declares fewer bytes than it inflates to', async () => {
      expect(await rejectionOf(zipBuilder().withLyingSize('big.txt', 'y'.repeat(10_000), 100))).toMatchObject(
        rejectedWith('ZIP entry "big.txt" inflates to more than the 100 bytes it declares'),
      );
    });

    it('rejects a stored entry whose declared size differs from its stored bytes', async () => {
      expect(
        await rejectionOf(zipBuilder().addRaw('stored.bin', 'abcdef', { compress: false, declaredSize: 3 })),
      ).toMatchObject(rejectedWith('ZIP entry "stored.bin" is stored uncompressed but declares 3 bytes and holds 6'));
    });

    it('rejects entries whose data overlaps another entry', async () => {
      const builder = zipBuilder()
        .addZeros('kernel.bin', 512 * 1024)
        .withCentralAlias('kernel.bin', 'alias.bin');
      expect(await rejectionOf(builder)).toMatchObject(rejectedWith('overlaps the data of "kernel.bin"'));
    });
  });

  it('closes the archive file after rejections and successes', async () => {
    const openFiles = async () => (await readdir('/proc/self/fd')).length;
    const archives = await Promise.all([
      writeArchive(zipBuilder().withSymlink('evil', '/etc/passwd')),
      writeArchive('not a zip'),
      writeArchive(zipBuilder().withLyingSize('big.txt', 'y'.repeat(10_000), 100)),
      writeArchive(zipBuilder().add('fine.txt', 'fine')),
    ]);
    const before = await openFiles();
    for (const archive of archives) await inspectZip(archive).catch(() => undefined);
    expect(await openFiles()).toBe(before);
  });
});
