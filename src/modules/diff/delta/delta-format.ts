import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { PlatformError } from '../../../common/errors.js';
import { compressContent, decompressContent, frameContentSize } from './binary-diff.js';

/**
 * The TBDELTA1 container (docs/delta-format.md is the normative description):
 *
 *   magic "TBDELTA1" (8 bytes) | header length H (u32 LE) | header: zstd frame of UTF-8 JSON (H bytes)
 *   | payload section (entry payloads and the layout skeleton) | SHA-256 of every preceding byte (32 bytes)
 */
export const DELTA_MAGIC = Buffer.from('TBDELTA1', 'latin1');
export const DELTA_FORMAT = 'tbdelta/1';
export const PREAMBLE_BYTES = 12;
export const TRAILER_BYTES = 32;
const MAX_HEADER_JSON_BYTES = 64 * 1024 * 1024;

export type DeltaOperation = 'keep' | 'add' | 'replace' | 'patch';
/** zstd: content compressed; zstd-patch: zstd frame decoded with the source entry as raw dictionary; zip-data: the target ZIP's compressed bytes verbatim. */
export type PayloadEncoding = 'zstd' | 'zstd-patch' | 'zip-data';
/** Where an exact rebuild takes an entry's compressed bytes from. */
export type DataSource = 'stored' | 'source' | 'deflate' | 'payload';

export interface PayloadRef {
  offset: number;
  length: number;
  encoding: PayloadEncoding;
}

export interface ExactData {
  source: DataSource;
  /** SHA-256 (hex) of the entry's compressed bytes in the target ZIP. */
  rawSha256: string;
  compressedSize: number;
  /** zlib level for source "deflate" (raw deflate, windowBits 15, memLevel 8, default strategy). */
  deflateLevel?: number;
}

export interface DeltaEntry {
  path: string;
  operation: DeltaOperation;
  sha256: string;
  size: number;
  /** keep and patch: the source entry the content comes from (differs from `path` for a rename). */
  sourcePath?: string;
  /** patch: SHA-256 of that source entry, checked before it is used as dictionary. */
  sourceSha256?: string;
  payload?: PayloadRef;
  compressionMethod: number;
  modifiedAt: string;
  unixMode: number;
  exact?: ExactData;
}

export type LayoutPiece = { literal: number } | { entry: number };

export interface ExactLayout {
  /** The target file in order: literal byte runs taken from the skeleton, and entries' compressed data. */
  pieces: LayoutPiece[];
  /** Every byte of the target file that is not entry data (headers, central directory, end record), zstd-compressed. */
  skeleton: PayloadRef & { size: number };
}

export interface ArchiveDescription {
  sha256: string;
  size: number;
  treeDigest: string;
  entryCount: number;
}

export interface DeltaHeader {
  format: typeof DELTA_FORMAT;
  createdAt: string;
  source: ArchiveDescription;
  target: ArchiveDescription;
  entries: DeltaEntry[];
  deleted: string[];
  layout: ExactLayout | null;
}

export interface DeltaSummary {
  format: string;
  patchSize: number;
  fullSize: number;
  changedFiles: number;
  addedFiles: number;
  deletedFiles: number;
  keptFiles: number;
  patchSha256: string;
  targetSha256: string;
  treeDigest: string;
  /** True when applying the delta rebuilds the target ZIP byte for byte (same SHA-256 as the target file). */
  exactRebuild: boolean;
}

export interface ApplyResult {
  outputPath: string;
  size: number;
  sha256: string;
  treeDigest: string;
  entryCount: number;
  /** True when the output's SHA-256 equals the target file's; otherwise it is content-equivalent (same entries, same tree digest). */
  byteIdentical: boolean;
}

/** SHA-256 over `path NUL sha256hex LF` for every entry, sorted by the UTF-8 bytes of the path. */
export function treeDigest(entries: ReadonlyArray<{ path: string; sha256: string }>): string {
  const sorted = entries.map((entry) => ({ key: Buffer.from(entry.path, 'utf8'), sha256: entry.sha256 }));
  sorted.sort((left, right) => Buffer.compare(left.key, right.key));
  const hash = createHash('sha256');
  for (const entry of sorted) {
    hash.update(entry.key);
    hash.update(`\0${entry.sha256}\n`);
  }
  return hash.digest('hex');
}

export function corruptDelta(reason: string): PlatformError {
  return new PlatformError('BAD_REQUEST', `Corrupt delta: ${reason}`);
}

export function encodeHeader(header: DeltaHeader): Buffer {
  return compressContent(Buffer.from(JSON.stringify(header), 'utf8'), 19);
}

export function preamble(encodedHeaderLength: number): Buffer {
  const buffer = Buffer.alloc(PREAMBLE_BYTES);
  DELTA_MAGIC.copy(buffer, 0);
  buffer.writeUInt32LE(encodedHeaderLength, 8);
  return buffer;
}

export interface OpenedDelta {
  header: DeltaHeader;
  /** Absolute offset of the payload section in the delta file. */
  payloadStart: number;
  payloadLength: number;
  fileSize: number;
  sha256: string;
}

/**
 * Reads and checks a delta file: magic, the trailing checksum over the whole file (so truncation and
 * bit flips are caught before anything is applied), and the header's structure.
 */
export async function readDeltaFile(path: string): Promise<OpenedDelta> {
  const { size } = await stat(path);
  if (size < PREAMBLE_BYTES + TRAILER_BYTES) throw corruptDelta(`file is ${size} bytes, shorter than the fixed parts`);
  const file = await open(path, 'r');
  let preambleBytes: Buffer;
  let trailer: Buffer;
  try {
    preambleBytes = Buffer.alloc(PREAMBLE_BYTES);
    await file.read(preambleBytes, 0, PREAMBLE_BYTES, 0);
    trailer = Buffer.alloc(TRAILER_BYTES);
    await file.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
  } finally {
    await file.close();
  }
  if (!preambleBytes.subarray(0, 8).equals(DELTA_MAGIC)) throw corruptDelta('bad magic (not a TBDELTA1 file)');
  const headerLength = preambleBytes.readUInt32LE(8);
  if (PREAMBLE_BYTES + headerLength > size - TRAILER_BYTES)
    throw corruptDelta('header runs past the end of the file (truncated?)');

  const bodyHash = createHash('sha256');
  const wholeHash = createHash('sha256');
  let headerBytes = Buffer.alloc(0);
  let position = 0;
  for await (const chunk of createReadStream(path, { end: size - TRAILER_BYTES - 1 })) {
    const bytes = chunk as Buffer;
    bodyHash.update(bytes);
    wholeHash.update(bytes);
    const headerEnd = PREAMBLE_BYTES + headerLength;
    if (position < headerEnd && position + bytes.length > PREAMBLE_BYTES) {
      const from = Math.max(PREAMBLE_BYTES - position, 0);
      const to = Math.min(headerEnd - position, bytes.length);
      headerBytes = Buffer.concat([headerBytes, bytes.subarray(from, to)]);
    }
    position += bytes.length;
  }
  if (!bodyHash.digest().equals(trailer)) throw corruptDelta('checksum mismatch (the file was truncated or altered)');
  wholeHash.update(trailer);

  const payloadStart = PREAMBLE_BYTES + headerLength;
  const payloadLength = size - TRAILER_BYTES - payloadStart;
  const header = parseHeader(headerBytes, payloadLength);
  return { header, payloadStart, payloadLength, fileSize: size, sha256: wholeHash.digest('hex') };
}

function parseHeader(encoded: Buffer, payloadLength: number): DeltaHeader {
  let json: unknown;
  try {
    const frameSize = declaredSize(encoded);
    if (frameSize > MAX_HEADER_JSON_BYTES) throw new Error('header too large');
    json = JSON.parse(decompressContent(encoded, frameSize).toString('utf8'));
  } catch (error) {
    throw corruptDelta(`header does not decode (${(error as Error).message})`);
  }
  const header = json as DeltaHeader;
  const check = (condition: boolean, what: string) => {
    if (!condition) throw corruptDelta(`header field ${what} is missing or invalid`);
  };
  check(typeof header === 'object' && header !== null, 'root');
  check(header.format === DELTA_FORMAT, `format (expected ${DELTA_FORMAT})`);
  for (const side of ['source', 'target'] as const) {
    const archive = header[side];
    check(typeof archive === 'object' && archive !== null, side);
    check(isSha256(archive.sha256) && isSha256(archive.treeDigest), `${side} digests`);
    check(isCount(archive.size) && isCount(archive.entryCount), `${side} sizes`);
  }
  check(Array.isArray(header.entries) && header.entries.length === header.target.entryCount, 'entries');
  check(Array.isArray(header.deleted) && header.deleted.every((path) => typeof path === 'string'), 'deleted');
  const inPayload = (ref: PayloadRef | undefined) =>
    ref !== undefined && isCount(ref.offset) && isCount(ref.length) && ref.offset + ref.length <= payloadLength;
  header.entries.forEach((entry, index) => {
    const name = `entries[${index}]`;
    check(typeof entry.path === 'string' && entry.path.length > 0, `${name}.path`);
    check(isSha256(entry.sha256) && isCount(entry.size), `${name}.sha256/size`);
    check(
      isCount(entry.compressionMethod) && isCount(entry.unixMode) && typeof entry.modifiedAt === 'string',
      `${name} metadata`,
    );
    switch (entry.operation) {
      case 'keep':
        check(typeof entry.sourcePath === 'string', `${name}.sourcePath`);
        break;
      case 'patch':
        check(typeof entry.sourcePath === 'string' && isSha256(entry.sourceSha256), `${name}.sourcePath`);
        check(inPayload(entry.payload) && entry.payload?.encoding === 'zstd-patch', `${name}.payload`);
        break;
      case 'add':
      case 'replace':
        check(
          inPayload(entry.payload) && (entry.payload?.encoding === 'zstd' || entry.payload?.encoding === 'zip-data'),
          `${name}.payload`,
        );
        break;
      default:
        check(false, `${name}.operation`);
    }
    if (entry.exact) {
      check(isSha256(entry.exact.rawSha256) && isCount(entry.exact.compressedSize), `${name}.exact`);
      check(['stored', 'source', 'deflate', 'payload'].includes(entry.exact.source), `${name}.exact.source`);
    }
  });
  if (header.layout !== null) {
    check(typeof header.layout === 'object' && Array.isArray(header.layout.pieces), 'layout');
    check(inPayload(header.layout.skeleton) && isCount(header.layout.skeleton.size), 'layout.skeleton');
    let literalBytes = 0;
    for (const piece of header.layout.pieces) {
      if ('literal' in piece) {
        check(isCount(piece.literal), 'layout literal');
        literalBytes += piece.literal;
      } else {
        check(
          isCount(piece.entry) &&
            piece.entry < header.entries.length &&
            header.entries[piece.entry].exact !== undefined,
          'layout entry',
        );
      }
    }
    check(literalBytes === header.layout.skeleton.size, 'layout literal total');
  }
  return header;
}

function declaredSize(frame: Buffer): number {
  const size = frameContentSize(frame);
  if (size === null) throw new Error('header frame has no content size');
  return size;
}

function isSha256(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The header alone, for callers (the registry service) that need the digests without applying. */
export async function readDeltaHeader(path: string): Promise<DeltaHeader> {
  return (await readDeltaFile(path)).header;
}
