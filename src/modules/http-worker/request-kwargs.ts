import { urlencoded } from 'body-parser';
import type { Request, Response } from 'express';
import { PlatformError } from '../../common/errors.js';
import { streamMultipart } from '../../common/multipart-reader.js';

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

/** The keyword arguments of a request without a body (GET, HEAD): its query string, nothing to clean up. */
export function queryArguments(request: Request): RequestArguments {
  const kwargs: Record<string, unknown> = {};
  assignArguments(kwargs, request.query as Record<string, unknown>);
  return { kwargs, body: undefined, files: {}, cleanup: NOTHING_TO_CLEAN };
}

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
  if (request.method === 'GET' || request.method === 'HEAD') return queryArguments(request);
  const kwargs: Record<string, unknown> = {};
  assignArguments(kwargs, request.query as Record<string, unknown>);

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

/**
 * Streams a multipart body: fields into memory (one field and all of them together within the body limit), every
 * file to its own file under `uploadDir`. A malformed form is refused at once and leaves nothing behind.
 */
async function readMultipartForm(
  request: Request,
  limits: KwargLimits,
): Promise<{ fields: Record<string, unknown>; files: Record<string, unknown>; cleanup(): Promise<void> }> {
  const fields: Record<string, unknown> = {};
  const form = await streamMultipart(request, {
    tempRoot: limits.uploadDir,
    directoryPrefix: 'call-',
    maxFileBytes: limits.uploadMaxBytes,
    maxFiles: MAX_FILES,
    maxFieldBytes: limits.bodyLimitBytes,
    maxFieldsBytes: limits.bodyLimitBytes,
    maxFields: MAX_FIELDS,
    onField: (name, value) => addField(fields, name, value),
  });
  const files: Record<string, unknown> = {};
  for (const file of form.files) {
    const argument: UploadedFileArgument = {
      filename: file.filename,
      content_type: file.mimeType,
      path: file.path,
      size: file.size,
      sha256: file.sha256,
    };
    addField(files, file.field, argument);
  }
  return { fields, files, cleanup: form.cleanup };
}
