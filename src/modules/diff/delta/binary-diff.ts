import { Compressor, Decompressor } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';
import { PlatformError } from '../../../common/errors.js';

/**
 * Binary diff engine: zstd with the old content loaded as a raw-content dictionary (the same idea
 * as `zstd --patch-from`). Measured against bsdiff-node on a changed 10 MiB executable it makes
 * patches within a few percent of bsdiff's size in a tenth of the time, works on buffers instead
 * of files, and decodes with any zstd library (see docs/delta-format.md, "Choice of engine").
 */

/** Largest decoder window the format allows: 128 MiB, zstd's default `windowLogMax`. */
export const MAX_WINDOW_LOG = 27;
/** Entries larger than this are never diffed (memory is about old + new + patch, time grows with size). */
export const DEFAULT_MAX_PATCH_ENTRY_BYTES = 64 * 1024 * 1024;
/**
 * Level 10 is the lowest level whose match finder (lazy2 with large hash tables) reaches deep into a
 * multi-megabyte dictionary; levels 1–8 barely use it, 13+ cost 5–10× the time for ~1 % smaller patches.
 */
export const DEFAULT_PATCH_LEVEL = 10;
export const DEFAULT_CONTENT_LEVEL = 12;

/** A ZIP-style zstd dictionary starts with this magic; such content cannot serve as a raw dictionary. */
const ZSTD_DICTIONARY_MAGIC = 0xec30a437;

export function canDiff(
  oldContent: Uint8Array,
  newContent: Uint8Array,
  maxEntryBytes = DEFAULT_MAX_PATCH_ENTRY_BYTES,
): boolean {
  if (oldContent.length < 8 || newContent.length === 0) return false;
  if (Math.max(oldContent.length, newContent.length) > Math.min(maxEntryBytes, 2 ** (MAX_WINDOW_LOG - 1))) return false;
  return Buffer.from(oldContent.buffer, oldContent.byteOffset, 4).readUInt32LE(0) !== ZSTD_DICTIONARY_MAGIC;
}

function windowLogFor(oldSize: number, newSize: number): number {
  // The window must span the dictionary and the new content so that any byte of the old entry stays addressable.
  const needed = Math.ceil(Math.log2(Math.max(oldSize, newSize, 1024))) + 1;
  return Math.min(Math.max(needed, 10), MAX_WINDOW_LOG);
}

/** A zstd frame that decodes to `newContent` when `oldContent` is loaded as a raw-content dictionary. */
export function createBinaryPatch(oldContent: Uint8Array, newContent: Uint8Array, level = DEFAULT_PATCH_LEVEL): Buffer {
  const compressor = new Compressor();
  compressor.setParameters({
    compressionLevel: level,
    windowLog: windowLogFor(oldContent.length, newContent.length),
    checksumFlag: true,
    contentSizeFlag: true,
  });
  compressor.loadDictionary(oldContent);
  return compressor.compress(newContent);
}

export function applyBinaryPatch(oldContent: Uint8Array, patch: Uint8Array, expectedSize: number): Buffer {
  return decodeFrame(patch, expectedSize, oldContent);
}

export function compressContent(content: Uint8Array, level = DEFAULT_CONTENT_LEVEL): Buffer {
  const compressor = new Compressor();
  compressor.setParameters({ compressionLevel: level, checksumFlag: true, contentSizeFlag: true });
  return compressor.compress(content);
}

export function decompressContent(frame: Uint8Array, expectedSize: number): Buffer {
  return decodeFrame(frame, expectedSize);
}

/** The content size a zstd frame declares, or null when it declares none or is not a frame. */
export function frameContentSize(frame: Uint8Array): number | null {
  try {
    return zstdBinding.getFrameContentSize(frame);
  } catch {
    return null;
  }
}

function decodeFrame(frame: Uint8Array, expectedSize: number, dictionary?: Uint8Array): Buffer {
  // The declared size is checked before allocating, so a hostile frame cannot make us allocate more than the entry.
  const declared = frameContentSize(frame);
  if (declared !== expectedSize) {
    throw new PlatformError(
      'BAD_REQUEST',
      `Delta payload declares ${String(declared)} bytes, the entry has ${expectedSize}`,
    );
  }
  const decompressor = new Decompressor();
  decompressor.setParameters({ windowLogMax: MAX_WINDOW_LOG });
  if (dictionary) decompressor.loadDictionary(dictionary);
  try {
    return decompressor.decompress(frame);
  } catch (error) {
    throw new PlatformError('BAD_REQUEST', `Delta payload does not decode: ${(error as Error).message}`);
  }
}
