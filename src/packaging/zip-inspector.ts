/**
 * Inspects an uploaded ZIP on disk without extracting it: every name, type and flag is checked
 * from the central directory first, then every entry is inflated into a byte counter (never into
 * memory or onto disk) to prove the declared sizes and CRCs true. The first violation rejects the
 * archive with a `ZIP_REJECTED` error naming the entry.
 *
 * yauzl parses the central directory; the bytes come from our own windowed reader so that the
 * many small reads of a 50,000-entry directory cost a handful of system calls, and data is read
 * in 1 MiB chunks rather than yauzl's 16 KiB stream chunks.
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { PlatformError } from '../common/errors.js';

export interface ZipLimits {
  /** Most entries (files and directories) an archive may hold. */
  maxEntries: number;
  /** Most bytes all entries may inflate to together. */
  maxTotalUncompressedBytes: number;
  /** Highest uncompressed/compressed ratio of one entry larger than `entryRatioFloorBytes`. */
  maxEntryRatio: number;
  /** Entries of at most this many uncompressed bytes are exempt from `maxEntryRatio`. */
  entryRatioFloorBytes: number;
  /** Highest uncompressed/compressed ratio of the whole archive once it passes `archiveRatioThresholdBytes`. */
  maxArchiveRatio: number;
  /** Total uncompressed size above which `maxArchiveRatio` applies. */
  archiveRatioThresholdBytes: number;
  /** Longest entry name, in characters (Unicode code points). */
  maxNameLength: number;
}

const MEBIBYTE = 1024 * 1024;

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 50_000,
  maxTotalUncompressedBytes: 512 * MEBIBYTE,
  maxEntryRatio: 100,
  // Deflate tops out near 1032:1, so small entries (a blank config, a run of padding) routinely
  // show ratios above 100 without being able to expand to anything harmful: an entry of at most
  // 1 MiB inflates to at most 1 MiB. Their sum stays bounded by the total-size cap and by the
  // archive ratio rule, which catch a bomb built from many small entries.
  entryRatioFloorBytes: MEBIBYTE,
  // PyPI's rule: a ratio above 50 is only suspicious once the archive is large enough to hurt.
  maxArchiveRatio: 50,
  archiveRatioThresholdBytes: 64 * MEBIBYTE,
  // The common file-name limit of ext4, NTFS and APFS.
  maxNameLength: 255,
});

export interface ZipEntrySummary {
  name: string;
  isDirectory: boolean;
  /** Uncompressed size in bytes, verified by inflating. */
  size: number;
  compressedSize: number;
  crc32: number;
}

export interface ZipInspection {
  /** Entries of every kind (files and directories). */
  entryCount: number;
  fileCount: number;
  totalUncompressedBytes: number;
  totalCompressedBytes: number;
  /** In central-directory order. */
  entries: ZipEntrySummary[];
}

/** What the central directory says about one entry. */
interface CentralEntry {
  name: string;
  nameRaw: Buffer;
  isDirectory: boolean;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_UTF8 = 0x0800;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_SIZE = 30;
const UNIX_TYPE_MASK = 0o170000;
const UNIX_REGULAR = 0o100000;
const UNIX_DIRECTORY = 0o040000;
const UNIX_SYMLINK = 0o120000;
const UNIX_TYPE_NAMES: Record<number, string> = {
  0o010000: 'a FIFO',
  0o020000: 'a character device',
  0o060000: 'a block device',
  0o140000: 'a socket',
};
/** Bytes per cached read: a 50,000-entry central directory (about 5 MiB) takes ~20 reads. */
const READ_WINDOW_BYTES = 256 * 1024;
/** Bytes per data read, into one buffer reused for the whole archive so reads make no garbage. */
const DATA_CHUNK_BYTES = MEBIBYTE;
/** Output chunk of the inflater: large enough that per-chunk work stays negligible. */
const INFLATE_CHUNK_BYTES = 256 * 1024;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function reject(message: string): PlatformError {
  return new PlatformError('ZIP_REJECTED', message);
}

function quote(name: string): string {
  // JSON quoting shows control characters and NUL as escapes instead of writing them into logs.
  return JSON.stringify(name);
}

function describeError(error: unknown): string {
  // Not `instanceof Error`: errors from Node internals can come from another realm (as under Jest).
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
}

/**
 * Serves yauzl's small reads and our header reads from one file handle through a cached window,
 * and entry data through one reusable buffer. Window buffers are never reused, so a view of one
 * stays valid while the inflater works on it.
 */
class WindowedFileReader extends yauzl.RandomAccessReader {
  private window = Buffer.alloc(0);
  private windowStart = 0;
  private readonly dataBuffer = Buffer.allocUnsafe(DATA_CHUNK_BYTES);

  constructor(
    private readonly handle: FileHandle,
    readonly fileSize: number,
  ) {
    super();
  }

  /** Up to `length` bytes at `position`; shorter only at the end of the file. */
  async readAt(position: number, length: number): Promise<Buffer> {
    const cached = this.cached(position, length);
    if (cached !== null) return cached;
    const wanted = Math.max(0, Math.min(Math.max(length, READ_WINDOW_BYTES), this.fileSize - position));
    const buffer = Buffer.allocUnsafe(wanted);
    const filled = await this.fill(buffer, wanted, position);
    this.window = buffer.subarray(0, filled);
    this.windowStart = position;
    return this.window.subarray(0, Math.min(length, filled));
  }

  /**
   * Up to `DATA_CHUNK_BYTES` of entry data at `position`; empty only at the end of the file. The
   * result may live in the reusable data buffer: the caller must be done with it before calling again.
   */
  async readData(position: number, length: number): Promise<Buffer> {
    const cached = this.cached(position, length);
    if (cached !== null) return cached;
    const filled = await this.fill(this.dataBuffer, Math.min(length, DATA_CHUNK_BYTES), position);
    return this.dataBuffer.subarray(0, filled);
  }

  private cached(position: number, length: number): Buffer | null {
    const offset = position - this.windowStart;
    if (offset < 0 || offset + length > this.window.length) return null;
    return this.window.subarray(offset, offset + length);
  }

  private async fill(buffer: Buffer, length: number, position: number): Promise<number> {
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (error: Error | null, bytesRead?: number) => void,
  ): void {
    this.readAt(position, length).then(
      (bytes) => callback(null, bytes.copy(buffer, offset)),
      (error: Error) => callback(error),
    );
  }

  override close(callback: (error: Error | null) => void): void {
    // The inspector owns the file handle and closes it itself.
    setImmediate(callback, null);
  }
}

/** Why a name must not be extracted, or null when it is safe. */
function nameProblem(name: string, nameRaw: Buffer, maxNameLength: number): string | null {
  if (name.length === 0) return 'has an empty name';
  // Raw bytes: CP437 decoding turns control bytes into glyphs, but extractors write the bytes.
  for (const byte of nameRaw) {
    if (byte === 0) return 'has a NUL character in its name';
    if (byte < 0x20 || byte === 0x7f) return 'has a control character in its name';
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'has a control character in its name';
  if (name.includes('\\')) return 'has a backslash in its name';
  if (name.startsWith('/')) return 'has an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'has a drive letter';
  if (name.split('/').includes('..')) return 'has a ".." path segment';
  if (name.length > maxNameLength && [...name].length > maxNameLength) {
    return `has a name longer than ${maxNameLength} characters`;
  }
  return null;
}

/** The path an extractor on a case-insensitive file system would write to. */
function comparisonKey(name: string): string {
  return name
    .normalize('NFC')
    .toLowerCase()
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

function decodeName(entry: Entry): { name: string; alternateName: string | null } {
  if ((entry.generalPurposeBitFlag & FLAG_UTF8) !== 0) {
    try {
      strictUtf8.decode(entry.fileNameRaw);
    } catch {
      throw reject(`ZIP entry ${quote(entry.fileNameRaw.toString('utf8'))} has a name that is not valid UTF-8`);
    }
  }
  // Strict mode keeps backslashes so that we can reject them instead of silently rewriting them.
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  // An Info-ZIP Unicode Path field replaces the name for yauzl, but some extractors ignore it
  // and use the header's own name, so that name must be safe too.
  const headerName = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, [], true);
  return { name, alternateName: headerName === name ? null : headerName };
}

/** Checks one central-directory record on its own; returns what pass two needs. */
function checkCentralEntry(entry: Entry, limits: ZipLimits): CentralEntry {
  const { name, alternateName } = decodeName(entry);
  // CP437 shows control bytes as glyphs ("\n" as "◙"); quote the raw bytes instead so the message
  // shows what an extractor would write.
  const hasControlByte = entry.fileNameRaw.some((byte) => byte < 0x20 || byte === 0x7f);
  const label = `ZIP entry ${quote(hasControlByte ? entry.fileNameRaw.toString('latin1') : name)}`;
  const problem =
    nameProblem(name, entry.fileNameRaw, limits.maxNameLength) ??
    (alternateName === null ? null : nameProblem(alternateName, entry.fileNameRaw, limits.maxNameLength));
  if (problem !== null) throw reject(`${label} ${problem}`);

  const isDirectory = name.endsWith('/');
  // Unix modes live in the upper 16 bits. They are read whatever the "made by" host says, because
  // some extractors honour them regardless; a zero type means "unspecified" (DOS, Windows tools).
  const unixType = (entry.externalFileAttributes >>> 16) & UNIX_TYPE_MASK;
  if (unixType === UNIX_SYMLINK) throw reject(`${label} is a symbolic link`);
  if (unixType === UNIX_DIRECTORY && !isDirectory)
    throw reject(`${label} is a directory whose name does not end in "/"`);
  if (unixType !== 0 && unixType !== UNIX_REGULAR && unixType !== UNIX_DIRECTORY) {
    throw reject(`${label} is ${UNIX_TYPE_NAMES[unixType] ?? 'not a regular file'}`);
  }

  if ((entry.generalPurposeBitFlag & FLAG_ENCRYPTED) !== 0) throw reject(`${label} is encrypted`);
  if (entry.compressionMethod !== METHOD_STORED && entry.compressionMethod !== METHOD_DEFLATE) {
    throw reject(
      `${label} uses compression method ${entry.compressionMethod}; only stored (0) and deflate (8) are accepted`,
    );
  }
  if (entry.compressionMethod === METHOD_STORED && entry.compressedSize !== entry.uncompressedSize) {
    throw reject(
      `${label} is stored uncompressed but declares ${entry.uncompressedSize} bytes and holds ${entry.compressedSize}`,
    );
  }
  if (isDirectory && entry.uncompressedSize > 0)
    throw reject(`${label} is a directory with ${entry.uncompressedSize} bytes of content`);

  if (entry.uncompressedSize > limits.entryRatioFloorBytes) {
    const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
    if (ratio > limits.maxEntryRatio) {
      throw reject(
        `${label} has a compression ratio of ${Math.round(ratio)} (${entry.uncompressedSize} bytes from ${entry.compressedSize}); the limit is ${limits.maxEntryRatio}`,
      );
    }
  }

  return {
    name,
    nameRaw: entry.fileNameRaw,
    isDirectory,
    flags: entry.generalPurposeBitFlag,
    method: entry.compressionMethod,
    crc32: entry.crc32,
    compressedSize: entry.compressedSize,
    uncompressedSize: entry.uncompressedSize,
    localHeaderOffset: entry.relativeOffsetOfLocalHeader,
  };
}

/** Rejects an entry that lies inside a path another entry declares to be a file ("a" and "a/b"). */
function checkFileDirectoryConflicts(entries: CentralEntry[], keys: Map<string, CentralEntry>): void {
  for (const entry of entries) {
    const segments = comparisonKey(entry.name).split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = keys.get(segments.slice(0, depth).join('/'));
      if (parent !== undefined && !parent.isDirectory) {
        throw reject(`ZIP entry ${quote(entry.name)} lies inside ${quote(parent.name)}, which is a file`);
      }
    }
  }
}

export class ZipInspector {
  readonly limits: Readonly<ZipLimits>;

  constructor(limits: Partial<ZipLimits> = {}) {
    this.limits = { ...DEFAULT_ZIP_LIMITS, ...limits };
  }

  /**
   * Resolves with a summary of a safe archive; rejects with a `ZIP_REJECTED` PlatformError when the
   * file is not a ZIP or breaks a rule. A file that cannot be opened rejects with the system error.
   */
  async inspect(path: string): Promise<ZipInspection> {
    const handle = await open(path, 'r');
    let zipfile: ZipFile | undefined;
    try {
      const { size } = await handle.stat();
      const reader = new WindowedFileReader(handle, size);
      try {
        zipfile = await yauzl.fromRandomAccessReaderPromise(reader, size, {
          autoClose: false,
          // Undecoded names: yauzl's own name check would reject "../x" with a message that does
          // not come from us, and its non-strict mode would turn backslashes into slashes.
          decodeStrings: false,
          // Sizes are checked below with messages naming the entry; yauzl's early check for stored
          // entries would fire first and anonymously.
          validateEntrySizes: false,
        });
      } catch (error) {
        throw reject(`Not a ZIP archive, or a truncated one: ${describeError(error)}`);
      }
      const entries = await this.readCentralDirectory(zipfile);
      await this.verifyContents(reader, entries);
      return this.summarize(entries);
    } finally {
      zipfile?.close();
      await handle.close();
    }
  }

  /** Pass one: metadata only, so a hostile archive is usually rejected before a byte is inflated. */
  private async readCentralDirectory(zipfile: ZipFile): Promise<CentralEntry[]> {
    const limits = this.limits;
    if (zipfile.entryCount > limits.maxEntries) {
      throw reject(`The ZIP archive has ${zipfile.entryCount} entries; the limit is ${limits.maxEntries}`);
    }
    const entries: CentralEntry[] = [];
    const keys = new Map<string, CentralEntry>();
    let totalUncompressed = 0;
    let totalCompressed = 0;
    const iterator = zipfile.eachEntry();
    for (;;) {
      let next: IteratorResult<Entry>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw reject(`The ZIP central directory is corrupt at entry ${entries.length + 1}: ${describeError(error)}`);
      }
      if (next.done) break;
      const entry = checkCentralEntry(next.value, limits);

      const key = comparisonKey(entry.name);
      const previous = keys.get(key);
      if (previous !== undefined) {
        throw reject(
          `ZIP entry ${quote(entry.name)} duplicates ${quote(previous.name)} (names compare case-insensitively)`,
        );
      }
      keys.set(key, entry);

      totalUncompressed += entry.uncompressedSize;
      totalCompressed += entry.compressedSize;
      if (totalUncompressed > limits.maxTotalUncompressedBytes) {
        throw reject(
          `ZIP entry ${quote(entry.name)} takes the declared uncompressed size to ${totalUncompressed} bytes; the limit is ${limits.maxTotalUncompressedBytes}`,
        );
      }
      entries.push(entry);
    }

    if (totalUncompressed > limits.archiveRatioThresholdBytes) {
      const ratio = totalUncompressed / Math.max(totalCompressed, 1);
      if (ratio > limits.maxArchiveRatio) {
        const worst = entries.reduce((best, entry) =>
          entry.uncompressedSize - entry.compressedSize > best.uncompressedSize - best.compressedSize ? entry : best,
        );
        throw reject(
          `The ZIP archive expands ${Math.round(ratio)}-fold (${totalUncompressed} bytes from ${totalCompressed}); above ${limits.archiveRatioThresholdBytes} bytes the limit is ${limits.maxArchiveRatio}, and ZIP entry ${quote(worst.name)} contributes most`,
        );
      }
    }
    checkFileDirectoryConflicts(entries, keys);
    return entries;
  }

  /** Pass two: every entry's local header and data, in file order so the disk reads run forward. */
  private async verifyContents(reader: WindowedFileReader, entries: CentralEntry[]): Promise<void> {
    // No running total of inflated bytes is needed: an entry is stopped within one inflater chunk
    // of passing its declared size, and the declared sizes were summed against the limit in pass one.
    const inFileOrder = [...entries].sort((left, right) => left.localHeaderOffset - right.localHeaderOffset);
    let previousDataEnd = 0;
    let previousName = '';
    for (const entry of inFileOrder) {
      const label = `ZIP entry ${quote(entry.name)}`;
      // Entries sharing bytes are the overlapping-file bomb: a few KiB referenced many times.
      if (entry.localHeaderOffset < previousDataEnd)
        throw reject(`${label} overlaps the data of ${quote(previousName)}`);
      const dataStart = await this.checkLocalHeader(reader, entry, label);
      previousDataEnd = dataStart + entry.compressedSize;
      previousName = entry.name;
      if (previousDataEnd > reader.fileSize)
        throw reject(`${label} runs past the end of the file (truncated archive?)`);

      let measured: { bytes: number; crc32: number };
      try {
        measured =
          entry.method === METHOD_STORED
            ? await this.measureStored(reader, dataStart, entry.compressedSize)
            : await this.measureDeflated(reader, dataStart, entry, label);
      } catch (error) {
        if (error instanceof PlatformError) throw error;
        throw reject(`${label} is corrupt: ${describeError(error)}`);
      }
      if (measured.bytes !== entry.uncompressedSize) {
        throw reject(`${label} inflates to ${measured.bytes} bytes but declares ${entry.uncompressedSize}`);
      }
      if (measured.crc32 !== entry.crc32) throw reject(`${label} fails its CRC-32 check (corrupt content)`);
    }
  }

  /** Returns where the entry's data starts; rejects a local header that disagrees with the directory. */
  private async checkLocalHeader(reader: WindowedFileReader, entry: CentralEntry, label: string): Promise<number> {
    const header = await reader.readAt(entry.localHeaderOffset, LOCAL_HEADER_SIZE);
    if (header.length < LOCAL_HEADER_SIZE || header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) {
      throw reject(`${label} has no valid local file header (corrupt or truncated archive)`);
    }
    const flags = header.readUInt16LE(6);
    const method = header.readUInt16LE(8);
    const nameLength = header.readUInt16LE(26);
    const extraLength = header.readUInt16LE(28);
    // Streaming extractors read only the local headers, so they must say what the directory says.
    const localName = await reader.readAt(entry.localHeaderOffset + LOCAL_HEADER_SIZE, nameLength);
    if (!localName.equals(entry.nameRaw)) {
      throw reject(`${label} has a different name in its local header: ${quote(localName.toString('latin1'))}`);
    }
    if (method !== entry.method || (flags & FLAG_ENCRYPTED) !== (entry.flags & FLAG_ENCRYPTED)) {
      throw reject(`${label} has a local header whose compression or encryption differs from the central directory`);
    }
    return entry.localHeaderOffset + LOCAL_HEADER_SIZE + nameLength + extraLength;
  }

  private async measureStored(
    reader: WindowedFileReader,
    start: number,
    length: number,
  ): Promise<{ bytes: number; crc32: number }> {
    let bytes = 0;
    let crc32 = 0;
    while (bytes < length) {
      const chunk = await reader.readData(start + bytes, length - bytes);
      if (chunk.length === 0) throw new Error('unexpected end of file');
      bytes += chunk.length;
      crc32 = zlib.crc32(chunk, crc32);
    }
    return { bytes, crc32 };
  }

  /** Inflates into a counter, stopping at the first chunk beyond the declared size. */
  private async measureDeflated(
    reader: WindowedFileReader,
    start: number,
    entry: CentralEntry,
    label: string,
  ): Promise<{ bytes: number; crc32: number }> {
    // An empty deflate entry with no data at all: nothing to inflate, and zlib would call it truncated.
    if (entry.compressedSize === 0 && entry.uncompressedSize === 0) return { bytes: 0, crc32: 0 };
    const inflater = zlib.createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES });
    let bytes = 0;
    let crc32 = 0;
    let violation: PlatformError | undefined;
    inflater.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > entry.uncompressedSize) {
        violation ??= reject(`${label} inflates to more than the ${entry.uncompressedSize} bytes it declares`);
        inflater.destroy(violation);
        return;
      }
      crc32 = zlib.crc32(chunk, crc32);
    });
    const done = finished(inflater);
    done.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
    try {
      let consumed = 0;
      while (consumed < entry.compressedSize) {
        const chunk = await reader.readData(start + consumed, entry.compressedSize - consumed);
        if (chunk.length === 0) throw new Error('unexpected end of file');
        consumed += chunk.length;
        // The write callback runs once zlib has consumed the whole chunk, so the reader may
        // then reuse its buffer; waiting for it also keeps at most one chunk in flight. A zlib
        // error destroys the stream without calling that callback, hence the race with `done`.
        const written = new Promise<void>((resolve, fail) =>
          inflater.write(chunk, (error) => (error ? fail(error) : resolve())),
        );
        written.catch(() => undefined);
        await Promise.race([written, done]);
      }
      inflater.end();
      await done;
    } catch (error) {
      inflater.destroy();
      throw violation ?? error;
    }
    return { bytes, crc32 };
  }

  private summarize(entries: CentralEntry[]): ZipInspection {
    let fileCount = 0;
    let totalUncompressedBytes = 0;
    let totalCompressedBytes = 0;
    const summaries: ZipEntrySummary[] = entries.map((entry) => {
      if (!entry.isDirectory) fileCount++;
      totalUncompressedBytes += entry.uncompressedSize;
      totalCompressedBytes += entry.compressedSize;
      return {
        name: entry.name,
        isDirectory: entry.isDirectory,
        size: entry.uncompressedSize,
        compressedSize: entry.compressedSize,
        crc32: entry.crc32,
      };
    });
    return { entryCount: entries.length, fileCount, totalUncompressedBytes, totalCompressedBytes, entries: summaries };
  }
}

/** Inspects the ZIP file at `path` with the default limits overridden by `limits`. */
export function inspectZip(path: string, limits: Partial<ZipLimits> = {}): Promise<ZipInspection> {
  return new ZipInspector(limits).inspect(path);
}
