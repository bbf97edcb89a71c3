import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlatformError } from '../../../common/errors.js';
import { applyDelta } from './apply-delta.js';
import { createDelta, hashFile } from './create-delta.js';
import { DELTA_FORMAT, readDeltaHeader, treeDigest } from './delta-format.js';
import { writeZip, type ZipEntrySpec } from '../../../../test/fixtures/zip-builder.js';
import { ZipReader, sha256Hex } from './zip-entries.js';

let workDirectory: string;
beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'delta-spec-'));
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

const at = (name: string) => join(workDirectory, name);

async function contentsOf(path: string): Promise<Map<string, string>> {
  const reader = await ZipReader.open(path, 'archive');
  try {
    const contents = new Map<string, string>();
    for (const info of reader.listing.entries) contents.set(info.path, sha256Hex(await reader.readContent(info)));
    return contents;
  } finally {
    await reader.close();
  }
}

const textLines = (count: number, seed: string) =>
  Array.from({ length: count }, (_, line) => `${seed} line ${line}: the quick brown fox jumps over the lazy dog`).join(
    '\n',
  );

const binary = randomBytes(256 * 1024);
const changedBinary = Buffer.concat([binary.subarray(0, 100_000), randomBytes(300), binary.subarray(100_000)]);
changedBinary.fill(7, 200_000, 200_064);

const sourceEntries: ZipEntrySpec[] = [
  { path: 'assets/' },
  { path: 'assets/logo.bin', content: binary },
  { path: 'readme.md', content: textLines(400, 'readme') },
  { path: 'old-name.txt', content: textLines(50, 'renamed') },
  { path: 'removed.txt', content: 'this file goes away' },
  { path: 'empty.txt', content: '' },
  { path: 'stored.dat', content: randomBytes(4096), compress: false },
];
const targetEntries: ZipEntrySpec[] = [
  { path: 'assets/' },
  { path: 'assets/logo.bin', content: changedBinary },
  { path: 'readme.md', content: textLines(400, 'readme').replace('line 200:', 'line two hundred:') },
  { path: 'new-name.txt', content: textLines(50, 'renamed') },
  { path: 'empty.txt', content: '' },
  { path: 'stored.dat', content: sourceEntries[6].content },
  { path: 'docs/', content: undefined },
  { path: 'docs/added.txt', content: 'brand new file' },
  { path: 'docs/empty-added.txt', content: '' },
];

async function buildPair(source = sourceEntries, target = targetEntries): Promise<void> {
  await writeZip(at('old.zip'), source);
  await writeZip(at('new.zip'), target);
}

async function expectRejected(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PlatformError);
  expect((error as PlatformError).code).toBe('BAD_REQUEST');
  expect((error as PlatformError).message).toMatch(message);
}

describe('createDelta and applyDelta', () => {
  it('rebuilds every target entry with identical content and the same tree digest', async () => {
    await buildPair();
    const summary = await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const result = await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    expect(await contentsOf(at('out.zip'))).toEqual(await contentsOf(at('new.zip')));
    expect(result.treeDigest).toBe(summary.treeDigest);
    const expected = await contentsOf(at('new.zip'));
    expect(treeDigest([...expected].map(([path, sha256]) => ({ path, sha256 })))).toBe(summary.treeDigest);
  });

  it('rebuilds a ZIP written by a Node zipper byte for byte', async () => {
    await buildPair();
    const summary = await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const result = await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    expect(summary.exactRebuild).toBe(true);
    expect(result.byteIdentical).toBe(true);
    expect(await hashFile(at('out.zip'))).toBe(await hashFile(at('new.zip')));
  });

  it('counts kept, changed, added and deleted files by path, so a rename is one added and one deleted', async () => {
    await buildPair();
    const summary = await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    expect(summary).toMatchObject({
      format: DELTA_FORMAT,
      keptFiles: 3,
      changedFiles: 2,
      addedFiles: 4,
      deletedFiles: 2,
    });
  });

  it('describes a renamed file as a keep from its old path and lists the old path as deleted', async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const header = await readDeltaHeader(at('delta.bin'));
    const renamed = header.entries.find((entry) => entry.path === 'new-name.txt');
    expect(renamed).toMatchObject({ operation: 'keep', sourcePath: 'old-name.txt' });
    expect(header.deleted).toEqual(['old-name.txt', 'removed.txt']);
  });

  it('ships a binary patch for a slightly changed binary entry', async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const header = await readDeltaHeader(at('delta.bin'));
    const logo = header.entries.find((entry) => entry.path === 'assets/logo.bin');
    expect(logo?.operation).toBe('patch');
    expect(logo?.payload?.length).toBeLessThan(4096);
  });

  it('ships a binary patch for a changed text entry', async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const header = await readDeltaHeader(at('delta.bin'));
    expect(header.entries.find((entry) => entry.path === 'readme.md')?.operation).toBe('patch');
  });

  it('keeps empty entries and directories', async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    const contents = await contentsOf(at('out.zip'));
    expect(contents.get('empty.txt')).toBe(sha256Hex(Buffer.alloc(0)));
    expect(contents.get('docs/empty-added.txt')).toBe(sha256Hex(Buffer.alloc(0)));
    expect([...contents.keys()].filter((path) => path.endsWith('/'))).toEqual(['assets/', 'docs/']);
  });

  it('makes a small delta of keeps for an unchanged archive', async () => {
    await buildPair(sourceEntries, sourceEntries);
    const summary = await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const result = await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    expect(summary).toMatchObject({ keptFiles: sourceEntries.length, changedFiles: 0, addedFiles: 0, deletedFiles: 0 });
    expect(summary.patchSize).toBeLessThan(2048);
    expect(result.byteIdentical).toBe(true);
  });

  it('rebuilds an equivalent archive when exact rebuild is turned off', async () => {
    await buildPair();
    const summary = await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'), { exactRebuild: 'never' });
    const result = await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    expect(summary.exactRebuild).toBe(false);
    expect(result.byteIdentical).toBe(false);
    expect(result.treeDigest).toBe(summary.treeDigest);
    expect(await contentsOf(at('out.zip'))).toEqual(await contentsOf(at('new.zip')));
  });

  it('rebuilds byte for byte a target whose deflate settings Node does not reproduce by shipping its compressed bytes', async () => {
    await writeZip(at('old.zip'), sourceEntries);
    // Level 3 with the "normal" option bits: none of the levels tried reproduce it, so the entry data travels verbatim.
    const { default: yazl } = await import('yazl');
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(randomBytes(30_000).toString('hex')), 'odd.txt', {
      compressionLevel: 3,
      mtime: new Date(0),
      forceDosTimestamp: true,
    });
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    await writeFile(at('new.zip'), Buffer.concat(chunks));
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    const header = await readDeltaHeader(at('delta.bin'));
    const result = await applyDelta(at('old.zip'), at('delta.bin'), at('out.zip'));
    expect(header.entries[0].payload?.encoding).toBe('zip-data');
    expect(result.byteIdentical).toBe(true);
  });

  it('falls back to an equivalent archive when the source was zipped differently but holds the same contents', async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
    await writeZip(
      at('restored.zip'),
      sourceEntries.map((entry) => ({ ...entry, compress: false })),
    );
    const result = await applyDelta(at('restored.zip'), at('delta.bin'), at('out.zip'));
    expect(result.byteIdentical).toBe(false);
    expect(await contentsOf(at('out.zip'))).toEqual(await contentsOf(at('new.zip')));
  });
});

describe('rejections', () => {
  beforeEach(async () => {
    await buildPair();
    await createDelta(at('old.zip'), at('new.zip'), at('delta.bin'));
  });

  it('rejects a delta with a bad magic header and writes no output', async () => {
    const bytes = await readFile(at('delta.bin'));
    bytes.write('NOTDELTA', 0, 'latin1');
    await writeFile(at('delta.bin'), bytes);
    await expectRejected(applyDelta(at('old.zip'), at('delta.bin'), at('out.zip')), /bad magic/);
    expect(existsSync(at('out.zip'))).toBe(false);
  });

  it('rejects a truncated delta', async () => {
    const bytes = await readFile(at('delta.bin'));
    await writeFile(at('delta.bin'), bytes.subarray(0, bytes.length - 100));
    await expectRejected(applyDelta(at('old.zip'), at('delta.bin'), at('out.zip')), /checksum mismatch|truncated/);
    expect(existsSync(at('out.zip'))).toBe(false);
  });

  it('rejects a delta with one altered payload byte', async () => {
    const bytes = await readFile(at('delta.bin'));
    bytes[bytes.length - 200] ^= 0xff;
    await writeFile(at('delta.bin'), bytes);
    await expectRejected(applyDelta(at('old.zip'), at('delta.bin'), at('out.zip')), /checksum mismatch/);
  });

  it('rejects a source archive whose kept entry has different content', async () => {
    const altered = sourceEntries.map((entry) =>
      entry.path === 'empty.txt' ? { ...entry, content: 'not empty' } : entry,
    );
    await writeZip(at('other.zip'), altered);
    await expectRejected(applyDelta(at('other.zip'), at('delta.bin'), at('out.zip')), /Source archive does not match/);
    expect(existsSync(at('out.zip'))).toBe(false);
  });

  it('rejects a source archive whose patched entry has different content', async () => {
    const altered = sourceEntries.map((entry) =>
      entry.path === 'assets/logo.bin' ? { ...entry, content: randomBytes(256 * 1024) } : entry,
    );
    await writeZip(at('other.zip'), altered);
    await expectRejected(
      applyDelta(at('other.zip'), at('delta.bin'), at('out.zip')),
      /assets\/logo.bin has different content/,
    );
    expect(existsSync(at('out.zip'))).toBe(false);
  });

  it('rejects a source archive that lacks an entry the delta builds on', async () => {
    await writeZip(
      at('other.zip'),
      sourceEntries.filter((entry) => entry.path !== 'readme.md'),
    );
    await expectRejected(applyDelta(at('other.zip'), at('delta.bin'), at('out.zip')), /no entry readme.md/);
  });

  it('rejects a file that is not a ZIP as source', async () => {
    await writeFile(at('other.zip'), 'plain text');
    await expectRejected(applyDelta(at('other.zip'), at('delta.bin'), at('out.zip')), /not a readable ZIP/);
  });
});
