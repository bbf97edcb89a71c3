import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { urlencoded } from 'body-parser';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import { PlatformError } from '../../common/errors.js';
import { HashingLimiter } from '../../common/multipart-reader.js';

/** An uploaded file as a function receives it (a keyword argument named after the form field). */
export interface UploadedFileArgument {
  filename: string;
  content_type: string;
  /** Where the bytes are on disk; removed once the function's answer is sent. */
  path: string;
  size: number;
  sha256: string;
}

export interface RequestArguments {
  kwargs: Record<string, unknown>;
  /** The parsed body (JSON or form fields), for `request_as_kwarg`. */
  body: unknown;
  /** The uploaded files by field (multipart only), for `request_as_kwarg`. */
  files: Record<string, unknown>;
  /** Removes uploaded files; always call it once the answer is sent. */
  cleanup(): Promise<void>;
}

export interface KwargLimits {
  uploadDir: string;
  uploadMaxBytes: number;
  bodyLimitBytes: number;
}

/** Names that would reach an object's prototype instead of a keyword argument; dropped from every source. */
const UNSAFE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Copies `source`'s own fields into `target`, a later source winning, never through the prototype. */
function assignArguments(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const name of Object.keys(source)) if (!UNSAFE_NAMES.has(name)) target[name] = source[name];
}

const MAX_FILES = 20;
const MAX_FIELDS = 200;
const NOTHING_TO_CLEAN = async () => undefined;

/**
 * A call's keyword arguments: the query string, then form fields (urlencoded or multipart, files streamed
 * to disk under the cap), then the JSON body's fields — a later source wins. A repeated query or form key
 * becomes an array.
 */
export async function readRequestArguments(
  request: Request,
  response: Response,
  limits: KwargLimits,
): Promise<RequestArguments> {
  const kwargs: Record<string, unknown> = {};
  assignArguments(kwargs, request.query as Record<string, unknown>);
  if (request.method === 'GET' || request.method === 'HEAD')
    return { kwargs, body: undefined, files: {}, cleanup: NOTHING_TO_CLEAN };

  const contentType = String(request.headers['content-type'] ?? '').toLowerCase();
  if (contentType.startsWith('multipart/form-data')) {
    const form = await readMultipartForm(request, limits);
    assignArguments(kwargs, form.fields);
    assignArguments(kwargs, form.files);
    return { kwargs, body: form.fields, files: form.files, cleanup: form.cleanup };
  }
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const fields = await readUrlencoded(request, response, limits.bodyLimitBytes);
    assignArguments(kwargs, fields);
    return { kwargs, body: fields, files: {}, cleanup: NOTHING_TO_CLEAN };
  }
  // JSON was parsed by the app's body parser (createHttpApp).
  const body: unknown = request.body;
  if (body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0)) {
    if (typeof body !== 'object' || Array.isArray(body))
      throw new PlatformError('BAD_REQUEST', 'The JSON body must be an object of keyword arguments');
    assignArguments(kwargs, body as Record<string, unknown>);
  }
  return { kwargs, body, files: {}, cleanup: NOTHING_TO_CLEAN };
}

function readUrlencoded(request: Request, response: Response, limit: number): Promise<Record<string, unknown>> {
  const parse = urlencoded({ extended: false, limit, parameterLimit: MAX_FIELDS });
  return new Promise((resolve, reject) => {
    parse(request, response, (error?: unknown) => {
      if (error) reject(error);
      else resolve({ ...((request.body as Record<string, unknown> | undefined) ?? {}) });
    });
  });
}

function addField(target: Record<string, unknown>, name: string, value: unknown): void {
  if (UNSAFE_NAMES.has(name)) return;
  if (!Object.hasOwn(target, name)) target[name] = value;
  else if (Array.isArray(target[name])) (target[name] as unknown[]).push(value);
  else target[name] = [target[name], value];
}

/** Streams a multipart body: fields into memory (capped), every file to its own file under `uploadDir`. */
async function readMultipartForm(
  request: Request,
  limits: KwargLimits,
): Promise<{ fields: Record<string, unknown>; files: Record<string, unknown>; cleanup(): Promise<void> }> {
  await mkdir(limits.uploadDir, { recursive: true });
  const directory = await mkdtemp(join(limits.uploadDir, 'call-'));
  const cleanup = () => rm(directory, { recursive: true, force: true });
  const fields: Record<string, unknown> = {};
  const files: Record<string, unknown> = {};
  const pending: Promise<void>[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({
          headers: request.headers,
          limits: {
            fieldSize: limits.bodyLimitBytes,
            fields: MAX_FIELDS,
            files: MAX_FILES,
            parts: MAX_FIELDS + MAX_FILES,
          },
        });
      } catch (error) {
        reject(new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`));
        return;
      }
      let failed = false;
      const fileStreams: Readable[] = [];
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        request.unpipe(parser);
        request.resume();
        // Settle every file write: a part cut off by an aborted body never ends, so its pipeline would hold
        // the open handle and the file forever (as multipart-reader.ts does for the registry).
        for (const stream of fileStreams) stream.destroy();
        reject(error);
      };
      let count = 0;
      parser.on('field', (name, value, info) => {
        if (info.valueTruncated) fail(new PlatformError('PAYLOAD_TOO_LARGE', `Field "${name}" is too large`));
        else addField(fields, name, value);
      });
      parser.on('file', (name, stream, info) => {
        fileStreams.push(stream);
        count += 1;
        const path = join(directory, `file-${count}`);
        const limiter = new HashingLimiter(limits.uploadMaxBytes);
        const upload: UploadedFileArgument = {
          filename: info.filename ?? 'upload',
          content_type: info.mimeType,
          path,
          size: 0,
          sha256: '',
        };
        addField(files, name, upload);
        pending.push(
          pipeline(stream, limiter, createWriteStream(path)).then(
            () => {
              upload.size = limiter.size;
              upload.sha256 = limiter.hash.digest('hex');
            },
            (error: unknown) => {
              stream.resume();
              fail(error);
            },
          ),
        );
      });
      parser.on('filesLimit', () => fail(new PlatformError('BAD_REQUEST', `At most ${MAX_FILES} files per call`)));
      parser.on('fieldsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many fields')));
      parser.on('partsLimit', () => fail(new PlatformError('BAD_REQUEST', 'Too many parts')));
      parser.on('error', (error) =>
        fail(new PlatformError('BAD_REQUEST', `Malformed multipart body: ${(error as Error).message}`)),
      );
      parser.on('close', () => {
        Promise.all(pending).then(() => (failed ? undefined : resolve()), fail);
      });
      // A client that gave up while the upload directory was being made (a busy worker) has already closed the
      // request: its 'aborted' event is gone and the body never ends, so check the state as well as the event.
      const aborted = () => fail(new PlatformError('BAD_REQUEST', 'Upload aborted by the client'));
      request.on('close', () => {
        if (!request.complete) aborted();
      });
      if (request.destroyed) {
        aborted();
        return;
      }
      request.pipe(parser);
    });
  } catch (error) {
    await Promise.allSettled(pending);
    await cleanup();
    throw error;
  }
  return { fields, files, cleanup };
}
