import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { PlatformError } from '../../../common/errors.js';

/** What the delta needs to know about one entry of a ZIP, in central-directory order. */
export interface ZipEntryInfo {
  path: string;
  isDirectory: boolean;
  /** ZIP compression method: 0 stored, 8 deflate; others are read through yauzl when it can. */
  compressionMethod: number;
  generalPurposeBitFlag: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Offset of the first byte of the entry's compressed data inside the ZIP file. */
  dataStart: number;
  /** Unix mode bits from the external attributes (0 when the archive was not made on Unix). */
  unixMode: number;
  /** Last modification time as recorded by the DOS date/time fields, in UTC. */
  modifiedAt: Date;
  entry: Entry;
}

export interface ZipListing {
  path: string;
  fileSize: number;
  entries: ZipEntryInfo[];
}

/** An open ZIP from which entry contents and raw compressed bytes can be read one entry at a time. */
export class ZipReader {
  private constructor(
    readonly listing: ZipListing,
    private readonly zip: ZipFile,
    private readonly file: FileHandle,
  ) {}

  static async open(path: string, label: string): Promise<ZipReader> {
    let zip: ZipFile;
    try {
      zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, strictFileNames: true });
    } catch (error) {
      throw new PlatformError('BAD_REQUEST', `${label} is not a readable ZIP archive: ${(error as Error).message}`);
    }
    const file = await open(path, 'r');
    try {
      const entries: ZipEntryInfo[] = [];
      const seen = new Set<string>();
      for await (const entry of zip.eachEntry()) {
        if (seen.has(entry.fileName)) {
          throw new PlatformError('BAD_REQUEST', `${label} holds the path ${entry.fileName} twice`);
        }
        seen.add(entry.fileName);
        if (entry.isEncrypted())
          throw new PlatformError('BAD_REQUEST', `${label} holds an encrypted entry: ${entry.fileName}`);
        const header = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
        entries.push({
          path: entry.fileName,
          isDirectory: entry.fileName.endsWith('/'),
          compressionMethod: entry.compressionMethod,
          generalPurposeBitFlag: entry.generalPurposeBitFlag,
          crc32: entry.crc32,
          compressedSize: entry.compressedSize,
          size: entry.uncompressedSize,
          dataStart: header.fileDataStart,
          unixMode: (entry.externalFileAttributes >>> 16) & 0xffff,
          modifiedAt: entry.getLastModDate({ timezone: 'UTC' }),
          entry,
        });
      }
      const { size } = await file.stat();
      return new ZipReader({ path, fileSize: size, entries }, zip, file);
    } catch (error) {
      zip.close();
      await file.close();
      if (error instanceof PlatformError) throw error;
      throw new PlatformError('BAD_REQUEST', `${label} is not a readable ZIP archive: ${(error as Error).message}`);
    }
  }

  /** The uncompressed content of one entry. Entries are buffered one at a time, never the whole archive. */
  async readContent(info: ZipEntryInfo): Promise<Buffer> {
    if (info.isDirectory && info.compressedSize === 0) return Buffer.alloc(0);
    const stream = await this.zip.openReadStreamPromise(info.entry);
    return collect(stream);
  }

  /** The entry's compressed bytes exactly as they sit in the ZIP file. */
  async readRaw(info: ZipEntryInfo): Promise<Buffer> {
    return this.readRange(info.dataStart, info.compressedSize);
  }

  async readRange(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    let offset = 0;
    while (offset < length) {
      const { bytesRead } = await this.file.read(buffer, offset, length - offset, position + offset);
      if (bytesRead === 0)
        throw new PlatformError('BAD_REQUEST', `${this.listing.path} ends before byte ${position + length}`);
      offset += bytesRead;
    }
    return buffer;
  }

  async close(): Promise<void> {
    this.zip.close();
    await this.file.close();
  }
}

export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
