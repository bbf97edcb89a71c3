import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import yazl from 'yazl';
import { PlatformError } from '../../../common/errors.js';
import { applyBinaryPatch, decompressContent } from './binary-diff.js';
import { hashFile } from './create-delta.js';
import {
  corruptDelta,
  readDeltaFile,
  treeDigest,
  type ApplyResult,
  type DeltaEntry,
  type OpenedDelta,
} from './delta-format.js';
import { ZipReader, sha256Hex, type ZipEntryInfo } from './zip-entries.js';

function wrongSource(reason: string): PlatformError {
  return new PlatformError('BAD_REQUEST', `Source archive does not match the delta: ${reason}`);
}

/** Thrown inside the exact rebuild when this machine cannot reproduce the target bytes; the caller falls back. */
class ExactRebuildUnavailable extends Error {}

interface ApplyContext {
  delta: OpenedDelta;
  deltaFile: FileHandle;
  source: ZipReader;
  sourceByPath: Map<string, ZipEntryInfo>;
}

/**
 * Rebuilds the target ZIP from the source ZIP and a TBDELTA1 file. Every entry is checked against its
 * SHA-256 before it is written, the output goes to a temporary file, and only a fully verified archive
 * is renamed to `outZipPath`. The output is byte-identical to the original target when the delta carries
 * an exact layout and this machine reproduces it; otherwise it is an equivalent archive (same entries,
 * same contents, same tree digest) and `byteIdentical` is false.
 */
export async function applyDelta(oldZipPath: string, patchPath: string, outZipPath: string): Promise<ApplyResult> {
  const delta = await readDeltaFile(patchPath);
  const source = await ZipReader.open(oldZipPath, 'Source archive');
  const deltaFile = await open(patchPath, 'r');
  const tempPath = `${outZipPath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const sourceByPath = new Map(source.listing.entries.map((info) => [info.path, info]));
    checkReferences(delta, sourceByPath);
    const context: ApplyContext = { delta, deltaFile, source, sourceByPath };

    let byteIdentical = false;
    if (delta.header.layout !== null && exactSourcesMatch(context)) {
      try {
        await writeExact(context, tempPath);
        byteIdentical = true;
      } catch (error) {
        if (!(error instanceof ExactRebuildUnavailable)) throw error;
      }
    }
    if (!byteIdentical) await writeEquivalent(context, tempPath);

    const sha256 = await hashFile(tempPath);
    if (byteIdentical && sha256 !== delta.header.target.sha256)
      throw corruptDelta('rebuilt file does not match the target SHA-256');
    const digest = treeDigest(delta.header.entries);
    if (digest !== delta.header.target.treeDigest)
      throw corruptDelta('entry list does not match the target tree digest');
    const { size } = await stat(tempPath);
    await rename(tempPath, outZipPath);
    return {
      outputPath: outZipPath,
      size,
      sha256,
      treeDigest: digest,
      entryCount: delta.header.entries.length,
      byteIdentical: sha256 === delta.header.target.sha256,
    };
  } finally {
    await deltaFile.close();
    await source.close();
    await rm(tempPath, { force: true });
  }
}

/** Fails fast, before anything is written, when the source lacks an entry the delta builds on. */
function checkReferences(delta: OpenedDelta, sourceByPath: Map<string, ZipEntryInfo>): void {
  for (const entry of delta.header.entries) {
    if (entry.operation !== 'keep' && entry.operation !== 'patch') continue;
    const info = sourceByPath.get(entry.sourcePath as string);
    if (!info) throw wrongSource(`it has no entry ${entry.sourcePath}`);
    if (entry.operation === 'keep' && info.size !== entry.size) {
      throw wrongSource(`${entry.sourcePath} is ${info.size} bytes, expected ${entry.size}`);
    }
  }
}

/** Raw compressed bytes can be copied from the source only if it was zipped the same way as when the delta was made. */
function exactSourcesMatch(context: ApplyContext): boolean {
  return context.delta.header.entries.every((entry) => {
    if (entry.exact?.source !== 'source') return true;
    const info = context.sourceByPath.get(entry.sourcePath as string) as ZipEntryInfo;
    return info.compressedSize === entry.exact.compressedSize && info.compressionMethod === entry.compressionMethod;
  });
}

async function readPayload(context: ApplyContext, entry: DeltaEntry): Promise<Buffer> {
  const payload = entry.payload;
  if (!payload) throw corruptDelta(`${entry.path} has no payload`);
  const buffer = Buffer.alloc(payload.length);
  await context.deltaFile.read(buffer, 0, payload.length, context.delta.payloadStart + payload.offset);
  return buffer;
}

/** The verified content of one target entry, and (for the exact path) the ZIP data bytes when they come from the payload. */
async function buildContent(context: ApplyContext, entry: DeltaEntry): Promise<{ content: Buffer; zipData?: Buffer }> {
  let content: Buffer;
  let zipData: Buffer | undefined;
  switch (entry.operation) {
    case 'keep': {
      content = await context.source.readContent(context.sourceByPath.get(entry.sourcePath as string) as ZipEntryInfo);
      if (sha256Hex(content) !== entry.sha256)
        throw wrongSource(`${entry.sourcePath} has different content than expected`);
      return { content };
    }
    case 'patch': {
      const old = await context.source.readContent(
        context.sourceByPath.get(entry.sourcePath as string) as ZipEntryInfo,
      );
      if (sha256Hex(old) !== entry.sourceSha256)
        throw wrongSource(`${entry.sourcePath} has different content than expected`);
      content = applyBinaryPatch(old, await readPayload(context, entry), entry.size);
      break;
    }
    default: {
      const payload = await readPayload(context, entry);
      if (entry.payload?.encoding === 'zip-data') {
        zipData = payload;
        content = decodeZipData(entry, payload);
      } else {
        content = decompressContent(payload, entry.size);
      }
    }
  }
  if (sha256Hex(content) !== entry.sha256)
    throw corruptDelta(`${entry.path} does not match its SHA-256 after decoding`);
  return { content, zipData };
}

function decodeZipData(entry: DeltaEntry, data: Buffer): Buffer {
  if (entry.compressionMethod === 0) return data;
  if (entry.compressionMethod !== 8)
    throw corruptDelta(`${entry.path} uses compression method ${entry.compressionMethod}`);
  try {
    return inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) });
  } catch (error) {
    throw corruptDelta(`${entry.path} does not inflate (${(error as Error).message})`);
  }
}

async function writeExact(context: ApplyContext, tempPath: string): Promise<void> {
  const { header } = context.delta;
  const layout = header.layout;
  if (!layout) throw new ExactRebuildUnavailable();
  const skeletonFrame = Buffer.alloc(layout.skeleton.length);
  await context.deltaFile.read(
    skeletonFrame,
    0,
    skeletonFrame.length,
    context.delta.payloadStart + layout.skeleton.offset,
  );
  const skeleton = decompressContent(skeletonFrame, layout.skeleton.size);
  const output = await open(tempPath, 'w');
  try {
    let skeletonPosition = 0;
    for (const piece of layout.pieces) {
      if ('literal' in piece) {
        await output.write(skeleton, skeletonPosition, piece.literal);
        skeletonPosition += piece.literal;
        continue;
      }
      const entry = header.entries[piece.entry];
      const exact = entry.exact;
      if (!exact) throw corruptDelta(`layout names ${entry.path}, which has no exact data`);
      const { content, zipData } = await buildContent(context, entry);
      let data: Buffer;
      switch (exact.source) {
        case 'stored':
          data = content;
          break;
        case 'source':
          data = await context.source.readRaw(context.sourceByPath.get(entry.sourcePath as string) as ZipEntryInfo);
          break;
        case 'deflate':
          data = deflateRawSync(content, { level: exact.deflateLevel });
          break;
        case 'payload':
          if (!zipData) throw corruptDelta(`${entry.path} has no zip-data payload`);
          data = zipData;
          break;
      }
      if (sha256Hex(data) !== exact.rawSha256) {
        // A different deflate build or a re-zipped source: the content is still right, the bytes are not.
        throw new ExactRebuildUnavailable();
      }
      await output.write(data);
    }
    await output.sync();
  } finally {
    await output.close();
  }
}

/** DOS timestamps are local time in yazl; rebuild the recorded wall-clock fields whatever this machine's zone. */
function wallClock(iso: string): Date {
  const utc = new Date(iso);
  return new Date(
    utc.getUTCFullYear(),
    utc.getUTCMonth(),
    utc.getUTCDate(),
    utc.getUTCHours(),
    utc.getUTCMinutes(),
    utc.getUTCSeconds(),
  );
}

async function writeEquivalent(context: ApplyContext, tempPath: string): Promise<void> {
  const zip = new yazl.ZipFile();
  let failure: Error | undefined;
  const zipStream = zip.outputStream as unknown as Readable;
  const fail = (error: Error) => {
    failure ??= error;
    zipStream.destroy(error);
  };
  const done = pipeline(zipStream, createWriteStream(tempPath));
  for (const entry of context.delta.header.entries) {
    const common = { mtime: wallClock(entry.modifiedAt), forceDosTimestamp: true };
    if (entry.path.endsWith('/') && entry.size === 0) {
      zip.addEmptyDirectory(entry.path, { ...common, mode: entry.unixMode || 0o40755 });
      continue;
    }
    // yazl asks for each entry's stream only when it is about to write it, so one entry is in memory at a time.
    zip.addReadStreamLazy(
      entry.path,
      { ...common, mode: entry.unixMode || 0o100644, compress: entry.compressionMethod !== 0, size: entry.size },
      (callback) => {
        buildContent(context, entry).then(
          ({ content }) => callback(null, Readable.from([content])),
          (error: Error) => fail(error),
        );
      },
    );
  }
  zip.on('error', fail);
  zip.end();
  try {
    await done;
  } catch (error) {
    throw failure ?? error;
  }
  if (failure) throw failure;
}
