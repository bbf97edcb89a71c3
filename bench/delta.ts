/**
 * Delta benchmark: generates its own data, then measures patch size against full size and the
 * create/apply times of the TBDELTA1 code, and compares the two binary diff engines on a changed
 * executable. Run after build: `node dist/bench/delta.js`.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyDelta } from '../src/modules/diff/delta/apply-delta.js';
import { applyBinaryPatch, createBinaryPatch, compressContent } from '../src/modules/diff/delta/binary-diff.js';
import { createDelta } from '../src/modules/diff/delta/create-delta.js';
import { writeZip, type ZipEntrySpec } from '../test/fixtures/zip-builder.js';
import { xorshift32 } from '../test/support/seeded-random.js';

const MIB = 1024 * 1024;

/** The same bytes on every run, so figures are comparable between runs. */
function generator(seed: number) {
  const next = xorshift32(seed);
  return {
    next,
    bytes(length: number): Buffer {
      const buffer = Buffer.alloc(length);
      for (let index = 0; index + 4 <= length; index += 4) buffer.writeUInt32LE(next(), index);
      for (let index = length - (length % 4); index < length; index++) buffer[index] = next() & 0xff;
      return buffer;
    },
    below(limit: number): number {
      return next() % limit;
    },
  };
}

const WORDS =
  'const let function return import export class interface async await value result error module package version delta archive entry content'.split(
    ' ',
  );

function textLike(random: ReturnType<typeof generator>, length: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const line =
      Array.from({ length: 4 + random.below(10) }, () => WORDS[random.below(WORDS.length)]).join(' ') +
      `; // ${random.next().toString(16)}\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, length);
}

interface Row {
  scenario: string;
  fullSize: number;
  patchSize: number;
  createSeconds: number;
  applySeconds: number;
  exact: string;
}

async function measureDelta(
  directory: string,
  scenario: string,
  source: ZipEntrySpec[],
  target: ZipEntrySpec[],
): Promise<Row> {
  const oldZip = join(directory, `${scenario}-old.zip`);
  const newZip = join(directory, `${scenario}-new.zip`);
  const patch = join(directory, `${scenario}.tbdelta`);
  const out = join(directory, `${scenario}-out.zip`);
  await writeZip(oldZip, source);
  await writeZip(newZip, target);
  let started = performance.now();
  const summary = await createDelta(oldZip, newZip, patch);
  const createSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const result = await applyDelta(oldZip, patch, out);
  const applySeconds = (performance.now() - started) / 1000;
  if (result.treeDigest !== summary.treeDigest) throw new Error(`${scenario}: tree digest differs after apply`);
  return {
    scenario,
    fullSize: summary.fullSize,
    patchSize: summary.patchSize,
    createSeconds,
    applySeconds,
    exact: result.byteIdentical ? 'byte-identical' : 'equivalent',
  };
}

/** A real executable's bytes (the running Node binary, first 10 MiB) and a slightly changed copy. */
async function executablePair(random: ReturnType<typeof generator>): Promise<{ oldBytes: Buffer; newBytes: Buffer }> {
  const oldBytes = (await readFile(process.execPath)).subarray(0, 10 * MIB);
  const changed = Buffer.from(oldBytes);
  for (let region = 0; region < 5; region++)
    random.bytes(4096).copy(changed, Math.floor((changed.length * (region + 0.5)) / 5));
  const pieces: Buffer[] = [];
  let last = 0;
  for (const fraction of [0.2, 0.5, 0.8]) {
    const at = Math.floor(changed.length * fraction);
    pieces.push(changed.subarray(last, at), random.bytes(1024));
    last = at;
  }
  pieces.push(changed.subarray(last));
  return { oldBytes, newBytes: Buffer.concat(pieces) };
}

interface BsdiffModule {
  diffSync(oldFile: string, newFile: string, patchFile: string): void;
  patchSync(oldFile: string, newFile: string, patchFile: string): void;
}

async function compareEngines(directory: string, oldBytes: Buffer, newBytes: Buffer): Promise<string[]> {
  const lines: string[] = [];
  const fullCompressed = compressContent(newBytes);
  lines.push(`new content zstd level 12 alone: ${fullCompressed.length} bytes`);
  let started = performance.now();
  const zstdPatch = createBinaryPatch(oldBytes, newBytes);
  const zstdCreate = (performance.now() - started) / 1000;
  started = performance.now();
  const rebuilt = applyBinaryPatch(oldBytes, zstdPatch, newBytes.length);
  const zstdApply = (performance.now() - started) / 1000;
  if (!rebuilt.equals(newBytes)) throw new Error('zstd patch did not round-trip');
  lines.push(
    `zstd-napi (raw dictionary, level 10): patch ${zstdPatch.length} bytes, create ${zstdCreate.toFixed(2)} s, apply ${zstdApply.toFixed(3)} s`,
  );

  const require = createRequire(import.meta.url);
  let bsdiff: BsdiffModule;
  try {
    bsdiff = require('bsdiff-node') as BsdiffModule;
  } catch {
    lines.push('bsdiff-node: not loadable here, skipped');
    return lines;
  }
  const oldFile = join(directory, 'exe.old');
  const newFile = join(directory, 'exe.new');
  const patchFile = join(directory, 'exe.bsdiff');
  const outFile = join(directory, 'exe.out');
  await writeFile(oldFile, oldBytes);
  await writeFile(newFile, newBytes);
  started = performance.now();
  bsdiff.diffSync(oldFile, newFile, patchFile);
  const bsdiffCreate = (performance.now() - started) / 1000;
  started = performance.now();
  bsdiff.patchSync(oldFile, outFile, patchFile);
  const bsdiffApply = (performance.now() - started) / 1000;
  if (!(await readFile(outFile)).equals(newBytes)) throw new Error('bsdiff patch did not round-trip');
  const bsdiffSize = (await stat(patchFile)).size;
  lines.push(
    `bsdiff-node (files only, bzip2): patch ${bsdiffSize} bytes, create ${bsdiffCreate.toFixed(2)} s, apply ${bsdiffApply.toFixed(3)} s`,
  );
  return lines;
}

async function main(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'delta-bench-'));
  try {
    const random = generator(20240501);
    // 200 files, about 10 MiB: two thirds text-like (compressible), one third random (incompressible).
    const files: ZipEntrySpec[] = [];
    for (let index = 0; index < 200; index++) {
      const length = 40 * 1024 + random.below(24 * 1024);
      const content = index % 3 === 2 ? random.bytes(length) : textLike(random, length);
      files.push({
        path: `pkg/${index % 3 === 2 ? 'assets' : 'src'}/file-${index}.${index % 3 === 2 ? 'bin' : 'ts'}`,
        content,
      });
    }
    const changedFiles = files.map((file, index) => {
      if (index !== 100) return file;
      const content = Buffer.from(file.content as Buffer);
      textLike(random, 2000).copy(content, 10_000);
      return { ...file, content };
    });
    const { oldBytes, newBytes } = await executablePair(random);

    const rows = [
      await measureDelta(directory, 'package-200-files-one-changed', files, changedFiles),
      await measureDelta(
        directory,
        'single-executable-changed',
        [{ path: 'bin/tool', content: oldBytes }],
        [{ path: 'bin/tool', content: newBytes }],
      ),
    ];
    const header = ['scenario', 'full_size', 'patch_size', 'ratio', 'create_s', 'apply_s', 'rebuild'];
    const table = rows.map((row) => [
      row.scenario,
      String(row.fullSize),
      String(row.patchSize),
      `${((row.patchSize / row.fullSize) * 100).toFixed(2)} %`,
      row.createSeconds.toFixed(2),
      row.applySeconds.toFixed(2),
      row.exact,
    ]);
    const widths = header.map((title, column) => Math.max(title.length, ...table.map((cells) => cells[column].length)));
    const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ');
    console.log(format(header));
    for (const cells of table) console.log(format(cells));
    console.log('\nBinary diff engines on the changed executable (10 MiB, 5 × 4 KiB overwritten, 3 × 1 KiB inserted):');
    for (const line of await compareEngines(directory, oldBytes, newBytes)) console.log(`  ${line}`);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

await main();
