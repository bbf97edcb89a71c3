import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { ByteRange } from '../storage/object-store.js';
import { PlatformError } from './errors.js';

export interface StoredObjectResponse {
  size: number;
  /** Strong validator, e.g. the content's SHA-256. */
  etag: string;
  contentType: string;
  filename?: string;
  headers?: Record<string, string>;
  open(range?: ByteRange): Promise<Readable>;
  /** Called once the whole object (a full or a from-zero response) has been sent. */
  onServed?(): Promise<unknown> | void;
}

/** Parses a single `bytes=a-b` range; null means "send it all" (multi-range requests are served whole). */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** Serves a stored object with ETag, Content-Length, If-None-Match (304) and single byte ranges (206). */
export async function sendStoredObject(
  request: Request,
  response: Response,
  object: StoredObjectResponse,
): Promise<void> {
  const etag = `"${object.etag}"`;
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    response.setHeader('ETag', etag);
    response.status(304).end();
    return;
  }
  const ifRange = request.headers['if-range'];
  const range = ifRange && ifRange !== etag ? null : parseRange(request.headers.range, object.size);
  if (range === 'unsatisfiable') {
    response.setHeader('Content-Range', `bytes */${object.size}`);
    throw new PlatformError('RANGE_NOT_SATISFIABLE', `Range not satisfiable for an object of ${object.size} bytes`);
  }
  // Opened before any header is set: an object deleted meanwhile answers a clean JSON 404, not a broken 200.
  let stream: Readable | null = null;
  if (request.method !== 'HEAD') {
    try {
      stream = await object.open(range ?? undefined);
    } catch (error) {
      if ((error as Error)?.name === 'ObjectNotFoundError') throw new PlatformError('NOT_FOUND', 'File not found');
      throw error;
    }
  }
  response.setHeader('ETag', etag);
  response.setHeader('Accept-Ranges', 'bytes');
  response.setHeader('Content-Type', object.contentType);
  response.setHeader('Cache-Control', 'private, max-age=0, must-revalidate');
  if (object.filename)
    response.setHeader('Content-Disposition', `attachment; filename="${object.filename.replace(/["\\\r\n]/g, '_')}"`);
  for (const [name, value] of Object.entries(object.headers ?? {})) response.setHeader(name, value);
  if (range) {
    response.status(206);
    response.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
    response.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    response.status(200);
    response.setHeader('Content-Length', String(object.size));
  }
  if (!stream) {
    response.end();
    return;
  }
  try {
    await pipeline(stream, response);
  } catch (error) {
    // The client went away mid-transfer: nothing to answer, and not a served file.
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' || response.destroyed) return;
    throw error;
  }
  if (!range || range.start === 0) await object.onServed?.();
}
