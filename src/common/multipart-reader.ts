import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request } from 'express';
import { PlatformError } from './errors.js';

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

/** What a multipart body may carry besides its file: boundaries, part headers and the text fields. */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

export interface MultipartOptions {
  fileField: string;
  /** Where the temporary upload goes; inside the data directory, so the local store can hard-link it. */
  tempRoot?: string;
  maxFileBytes: number;
  maxFieldBytes?: number;
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

/**
 * Streams a multipart request: text fields into memory (small, capped), the one file part to a
 * temporary file while hashing it with SHA-256 and enforcing the byte cap. Nothing is buffered whole.
 */
export async function readMultipart(request: Request, options: MultipartOptions): Promise<MultipartBody> {
  const contentType = request.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw new PlatformError('BAD_REQUEST', 'Expected a multipart/form-data body');
  }
  const declaredLength = Number(request.headers['content-length'] ?? 0);
  if (declaredLength > options.maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
    throw new PlatformError('PAYLOAD_TOO_LARGE', `Upload exceeds the limit of ${options.maxFileBytes} bytes`);
  }

  const root = options.tempRoot ?? tmpdir();
  await mkdir(root, { recursive: true });
  const directory = await mkdtemp(join(root, 'tb-upload-'));
  const cleanup = () => rm(directory, { recursive: true, force: true });
  const fields: Record<string, string> = {};
  let file: UploadedFile | null = null;
  const pending: Promise<void>[] = [];
  // The file part being written: destroyed when the request fails or is aborted, so its handle closes.
  const writing: Array<{ destroy(error?: Error): void }> = [];

  try {
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({
          headers: request.headers,
          limits: {
            fieldSize: options.maxFieldBytes ?? 1024 * 1024,
            fields: options.maxFields ?? 50,
            files: 1,
            parts: 60,
          },
        });
      } catch (error) {
        reject(new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`));
        return;
      }
      let failed = false;
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        request.unpipe(parser);
        // Settle the file write: without this an aborted body never ends, the pipeline never settles and
        // the open handle and the staged file stay forever.
        // (Without an error: a stream still waiting on beforeFile has no listener for one.)
        for (const stream of writing) stream.destroy();
        // Keep reading (and dropping) the rest of the body so the client receives our answer.
        request.resume();
        reject(error);
      };

      parser.on('field', (name, value, info) => {
        if (info.valueTruncated) fail(new PlatformError('PAYLOAD_TOO_LARGE', `Field "${name}" is too large`));
        else fields[name] = value;
      });
      parser.on('file', (name, stream, info) => {
        if (name !== options.fileField || file) {
          stream.resume();
          if (name !== options.fileField)
            fail(
              new PlatformError(
                'BAD_REQUEST',
                `Unexpected file field "${name}"; send the file as "${options.fileField}"`,
              ),
            );
          return;
        }
        const path = join(directory, 'upload');
        const limiter = new HashingLimiter(options.maxFileBytes);
        const upload: UploadedFile = {
          field: name,
          filename: info.filename ?? 'upload',
          mimeType: info.mimeType,
          path,
          size: 0,
          sha256: '',
        };
        file = upload;
        writing.push(stream);
        // Its errors reach us through the pipeline; until that is attached (beforeFile) they must not go unheard.
        stream.on('error', () => undefined);
        if (failed) stream.destroy();
        const ready = options.beforeFile ? options.beforeFile({ ...fields }) : Promise.resolve();
        pending.push(
          ready
            .then(
              () => pipeline(stream, limiter, createWriteStream(path)),
              (error: unknown) => {
                stream.resume();
                throw error;
              },
            )
            .then(
              () => {
                upload.size = limiter.size;
                upload.sha256 = limiter.hash.digest('hex');
              },
              (error) => {
                stream.resume();
                fail(error);
              },
            ),
        );
      });
      parser.on('filesLimit', () => fail(new PlatformError('BAD_REQUEST', 'Only one file may be uploaded')));
      parser.on('fieldsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many fields')));
      parser.on('partsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many parts')));
      parser.on('error', (error) =>
        fail(new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`)),
      );
      parser.on('close', () => {
        Promise.all(pending).then(() => (failed ? undefined : resolve()), fail);
      });
      const aborted = () => fail(new PlatformError('BAD_REQUEST', 'Upload aborted by the client'));
      request.on('aborted', aborted);
      request.on('error', aborted);
      request.on('close', () => {
        if (!request.complete) aborted();
      });
      request.pipe(parser);
    });
  } catch (error) {
    await Promise.allSettled(pending);
    await cleanup();
    throw error;
  }
  return { fields, file, cleanup };
}
