import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request } from 'express';
import { PlatformError } from './errors.js';
import { stagingPrefix } from './staging-owner.js';

export interface UploadedFile {
  field: string;
  filename: string;
  mimeType: string;
  path: string;
  size: number;
  sha256: string;
}

export interface MultipartBody {
  fields: Record<string, string>;
  file: UploadedFile | null;
  /** Removes the temporary directory; always call it (in a finally). */
  cleanup(): Promise<void>;
}

export interface MultipartOptions {
  fileField: string;
  /** Where the temporary upload goes; inside the data directory, so the local store can hard-link it. */
  tempRoot?: string;
  maxFileBytes: number;
  /** The largest one text field may be (413 above it); 1 MiB unless set. */
  maxFieldBytes?: number;
  /** All text parts together, part headers included (413 above it); twice `maxFieldBytes` unless set. */
  maxFieldsBytes?: number;
  maxFields?: number;
  /**
   * Called with the text fields sent before the file part, before any of its bytes are staged: throwing
   * refuses the upload at once (e.g. a version that is already taken), so nothing is written.
   */
  beforeFile?(fields: Record<string, string>): Promise<void>;
}

/** Uploads are staged under DATA_DIR/tmp: the same filesystem as local objects, so storing is a hard link, not a copy. */
export function uploadTempRoot(config: { dataDir: string }): string {
  return join(config.dataDir, 'tmp');
}

/** Counts and hashes bytes on their way to disk, failing once the cap is passed. */
export class HashingLimiter extends Transform {
  readonly hash = createHash('sha256');
  size = 0;

  constructor(private readonly maxBytes: number) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      callback(new PlatformError('PAYLOAD_TOO_LARGE', `Upload exceeds the limit of ${this.maxBytes} bytes`));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }
}

const DEFAULT_FIELD_BYTES = 1024 * 1024;

/** What a route's body cap allows a multipart body besides its files: boundaries, part headers, small fields. */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Streams a multipart request: text fields into memory (small, capped), the one file part to a staging file
 * while hashing it with SHA-256 and enforcing the byte cap. Nothing is buffered whole. A second file part, a
 * file part under another name, or a text field sent twice (names ending in `[]` excepted) is refused at once.
 */
export async function readMultipart(request: Request, options: MultipartOptions): Promise<MultipartBody> {
  const fields: Record<string, string> = {};
  const form = await streamMultipart(request, {
    tempRoot: options.tempRoot ?? tmpdir(),
    directoryPrefix: stagingPrefix(),
    maxFileBytes: options.maxFileBytes,
    maxFiles: 1,
    maxFieldBytes: options.maxFieldBytes,
    maxFieldsBytes: options.maxFieldsBytes,
    maxFields: options.maxFields,
    onField(name, value) {
      if (Object.hasOwn(fields, name) && !name.endsWith('[]')) {
        throw new PlatformError('BAD_REQUEST', `Field "${name}" is sent more than once`);
      }
      fields[name] = value;
    },
    onFile(name) {
      if (name !== options.fileField) {
        throw new PlatformError(
          'BAD_REQUEST',
          `Unexpected file field "${name}"; send the file as "${options.fileField}"`,
        );
      }
      return options.beforeFile?.({ ...fields });
    },
  });
  return { fields, file: form.files[0] ?? null, cleanup: form.cleanup };
}

export interface MultipartStreamOptions {
  /** Where the staging directory goes; it is made only when a file part is accepted. */
  tempRoot: string;
  /** The staging directory's name before mkdtemp's six random characters. */
  directoryPrefix: string;
  /** Per file part (413 above it). */
  maxFileBytes: number;
  maxFiles: number;
  /** The largest one text field may be (413 above it); 1 MiB unless set. */
  maxFieldBytes?: number;
  /** All text parts together, part headers included (413 above it); twice `maxFieldBytes` unless set. */
  maxFieldsBytes?: number;
  /** 50 unless set. */
  maxFields?: number;
  /** Each text field as it arrives; throwing refuses the request. */
  onField(name: string, value: string): void;
  /**
   * Each file part as it starts, before any of its bytes are staged; throwing (or rejecting) refuses the request
   * at once, so nothing is written.
   */
  onFile?(name: string): Promise<void> | void;
}

/**
 * The multipart core every upload route shares. A malformed body — too many file parts, fields or parts, a
 * field over its cap, text fields that never end, a broken or truncated form, or whatever `onField`/`onFile`
 * refuse — is answered as soon as it shows. The staging directory is made only once a file part is accepted,
 * and on every failure (refused, malformed or aborted, even while `onFile` runs) each file is closed and the
 * directory removed before the error reaches the caller; on success the caller's `cleanup` does it.
 */
export async function streamMultipart(
  request: Request,
  options: MultipartStreamOptions,
): Promise<{ files: UploadedFile[]; cleanup(): Promise<void> }> {
  const contentType = request.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    request.resume();
    throw new PlatformError('BAD_REQUEST', 'Expected a multipart/form-data body');
  }
  const fieldBytes = options.maxFieldBytes ?? DEFAULT_FIELD_BYTES;
  const fieldsBudget = options.maxFieldsBytes ?? 2 * fieldBytes;
  const maxFields = options.maxFields ?? 50;
  const declaredLength = Number(request.headers['content-length'] ?? 0);
  if (declaredLength > options.maxFiles * options.maxFileBytes + fieldsBudget) {
    throw new PlatformError('PAYLOAD_TOO_LARGE', `Upload exceeds the limit of ${options.maxFileBytes} bytes`);
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: request.headers,
      limits: {
        fieldSize: fieldBytes,
        fields: maxFields,
        files: options.maxFiles,
        parts: maxFields + options.maxFiles,
      },
    });
  } catch (error) {
    request.resume();
    throw new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`);
  }

  const files: UploadedFile[] = [];
  let directory: Promise<string> | null = null;
  const stagingDirectory = () => {
    directory ??= mkdir(options.tempRoot, { recursive: true }).then(() =>
      mkdtemp(join(options.tempRoot, options.directoryPrefix)),
    );
    return directory;
  };
  let failure: unknown = null;
  // One entry per file part: settles once its write handle is closed, whatever happened.
  const writes: Promise<void>[] = [];
  // Stops the file parts' streams when the request fails, so a write waiting on bytes that never come settles.
  const stops: Array<() => void> = [];
  const cleanup = async () => {
    await Promise.allSettled(writes);
    if (directory) {
      const path = await directory.catch(() => null);
      if (path) await rm(path, { recursive: true, force: true });
    }
  };

  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => {
        if (failure) return;
        failure = error;
        request.unpipe(parser);
        for (const stop of stops) stop();
        // Keep reading (and dropping) the rest of the body so the client receives our answer.
        request.resume();
        reject(error);
      };

      // Text parts are capped together, counted as they arrive: a field that never ends is refused while it
      // streams, not when (if ever) it ends. The bytes of a file part are its own cap's business.
      let received = 0;
      let textBytes = 0;
      let counted = 0;
      let inFile = false;
      request.on('data', (chunk: Buffer) => {
        if (failure) return;
        received += chunk.length;
        if (!inFile) textBytes += received - counted;
        counted = received;
        if (textBytes > fieldsBudget) {
          fail(new PlatformError('PAYLOAD_TOO_LARGE', `Form fields exceed the limit of ${fieldsBudget} bytes`));
        }
      });

      parser.on('field', (name, value, info) => {
        if (failure) return;
        if (info.valueTruncated) fail(new PlatformError('PAYLOAD_TOO_LARGE', `Field "${name}" is too large`));
        else if (info.nameTruncated) fail(new PlatformError('BAD_REQUEST', 'A field name is too long'));
        else {
          try {
            options.onField(name, value);
          } catch (error) {
            fail(error);
          }
        }
      });
      parser.on('file', (name, stream, info) => {
        if (failure) {
          stream.resume();
          return;
        }
        let accepted: Promise<void>;
        try {
          accepted = Promise.resolve(options.onFile?.(name));
        } catch (error) {
          stream.resume();
          fail(error);
          return;
        }
        inFile = true;
        counted = received;
        stream.once('end', () => {
          counted = received;
          inFile = false;
        });
        // Its errors reach us through the pipeline; until that is attached (onFile) they must not go unheard.
        stream.on('error', () => undefined);
        const limiter = new HashingLimiter(options.maxFileBytes);
        let output: WriteStream | null = null;
        stops.push(() => {
          stream.destroy();
          limiter.destroy();
          output?.destroy();
        });
        const upload: UploadedFile = {
          field: name,
          filename: info.filename ?? 'upload',
          mimeType: info.mimeType,
          path: '',
          size: 0,
          sha256: '',
        };
        files.push(upload);
        const write = async () => {
          await accepted;
          if (failure) return;
          const path = join(await stagingDirectory(), `upload-${files.indexOf(upload) + 1}`);
          // Refused or aborted meanwhile: create no file (the directory goes with cleanup).
          if (failure) return;
          upload.path = path;
          const target = createWriteStream(path);
          output = target;
          const closed = new Promise<void>((settle) => target.once('close', () => settle()));
          try {
            await pipeline(stream, limiter, target);
          } finally {
            await closed;
          }
          upload.size = limiter.size;
          upload.sha256 = limiter.hash.digest('hex');
        };
        writes.push(
          write().catch((error: unknown) => {
            stream.resume();
            fail(error);
          }),
        );
      });
      parser.on('filesLimit', () =>
        fail(
          new PlatformError(
            'BAD_REQUEST',
            options.maxFiles === 1 ? 'Only one file may be uploaded' : `At most ${options.maxFiles} files per request`,
          ),
        ),
      );
      parser.on('fieldsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many fields')));
      parser.on('partsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many parts')));
      parser.on('error', (error) =>
        fail(new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`)),
      );
      parser.on('close', () => {
        void Promise.all(writes).then(() => (failure ? undefined : resolve()));
      });
      const aborted = () => fail(new PlatformError('BAD_REQUEST', 'Upload aborted by the client'));
      request.on('aborted', aborted);
      request.on('error', aborted);
      request.on('close', () => {
        if (!request.complete) aborted();
      });
      // A client that gave up before this reader started (a busy process) has already closed the request: its
      // events are gone and the body never ends, so the state decides.
      if (request.destroyed) {
        aborted();
        return;
      }
      request.pipe(parser);
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { files, cleanup };
}
