import type { Request, Response } from 'express';
import { Result } from '../app-core/index.js';

/**
 * The HTTP status of an error Result: its exec_code when that is an HTTP error status (400–599); else 400 for
 * an InputError (the caller's arguments) and 500 for anything else.
 */
export function errorStatusOf(result: Result): number {
  const code = result.info.exec_code;
  if (Number.isInteger(code) && code >= 400 && code <= 599) return code;
  return result.error === 'InputError' ? 400 : 500;
}

/** `attachment` with an ASCII fallback and the RFC 5987 UTF-8 name. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function bytesOf(content: unknown): Buffer {
  if (Buffer.isBuffer(content)) return content;
  if (content instanceof Uint8Array) return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  return Buffer.from(JSON.stringify(content ?? null), 'utf8');
}

/** A wire body that keeps the request id beside the Result when the answer is a server error. */
function errorBody(result: Result, status: number, requestId: string): object {
  return status >= 500 ? { ...result.toJSON(), request_id: requestId } : result.toJSON();
}

/**
 * Answers with a function's outcome: the whole Result as JSON by default; `html`, `redirect`, `file`/`binary`
 * and `stream` as their natural responses; an error Result with its status (errorStatusOf). A `row` function's
 * raw value is sent as JSON (bytes as octet-stream). Synchronous except for a stream (a Promise then).
 */
export function sendOutcome(
  outcome: unknown,
  request: Request,
  response: Response,
  requestId: string,
): void | Promise<void> {
  if (!(outcome instanceof Result)) {
    if (outcome instanceof Uint8Array) {
      response.type('application/octet-stream').send(bytesOf(outcome));
      return;
    }
    response.json(outcome ?? null);
    return;
  }
  for (const [name, value] of outcome.httpHeaders) response.appendHeader(name, value);
  if (outcome.isError()) {
    const status = errorStatusOf(outcome);
    response.status(status).json(errorBody(outcome, status, requestId));
    return;
  }
  const data = outcome.result.data;
  switch (outcome.result.data_type) {
    case 'html':
      response.type('text/html; charset=utf-8').send(typeof data === 'string' ? data : String(data ?? ''));
      return;
    case 'redirect': {
      const target = data as { url?: unknown; status_code?: unknown } | null;
      const status = Number(target?.status_code);
      if (typeof target?.url !== 'string' || target.url.length === 0) break;
      response.redirect(Number.isInteger(status) && status >= 300 && status <= 399 ? status : 302, target.url);
      return;
    }
    case 'file': {
      const file = data as { filename?: unknown; content_type?: unknown; content?: unknown } | null;
      if (file === null || typeof file !== 'object' || !('content' in file)) break;
      const filename = typeof file.filename === 'string' && file.filename ? file.filename : 'download';
      response.setHeader('Content-Disposition', contentDisposition(filename));
      response.type(typeof file.content_type === 'string' ? file.content_type : 'application/octet-stream');
      response.send(bytesOf(file.content));
      return;
    }
    case 'binary': {
      const filename = outcome.result.data_info || 'download.bin';
      response.setHeader('Content-Disposition', contentDisposition(filename));
      response.type('application/octet-stream').send(bytesOf(data));
      return;
    }
    case 'stream':
      if (isIterable(data))
        return sendStream(data, outcome.result.data_info || 'text/event-stream', request, response, requestId);
      break;
    default:
      break;
  }
  response.json(outcome);
}

function isIterable(value: unknown): value is AsyncIterable<unknown> | Iterable<unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    (Symbol.asyncIterator in value || Symbol.iterator in value) &&
    !(value instanceof Uint8Array)
  );
}

/** One server-sent event: strings as they are (one `data:` line per line), anything else as JSON. */
export function sseEvent(chunk: unknown, event?: string): string {
  const text = typeof chunk === 'string' ? chunk : JSON.stringify(chunk ?? null);
  const lines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}`);
  return `${event ? `event: ${event}\n` : ''}${lines.join('\n')}\n\n`;
}

/**
 * Streams the chunks: as server-sent events (`text/event-stream`: `Cache-Control: no-cache`,
 * `X-Accel-Buffering: no`, an `end` event when done, an `error` event if the source fails) or, for any
 * other content type, chunked (strings and bytes as they are, anything else as a JSON line). The source is
 * closed when the client goes away.
 */
async function sendStream(
  source: AsyncIterable<unknown> | Iterable<unknown>,
  contentType: string,
  _request: Request,
  response: Response,
  requestId: string,
): Promise<void> {
  const sse = contentType.toLowerCase().startsWith('text/event-stream');
  response.status(200);
  response.setHeader('Content-Type', sse ? 'text/event-stream; charset=utf-8' : contentType);
  response.setHeader('Cache-Control', 'no-cache');
  response.setHeader('X-Accel-Buffering', 'no');
  if (sse) response.setHeader('Connection', response.getHeader('Connection') ?? 'keep-alive');
  response.flushHeaders();
  let gone = false;
  const onClose = () => {
    gone = true;
  };
  // The response's `close` (not the request's: that one fires once the body is read) tells the client left.
  response.once('close', onClose);
  const iterator =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      : (source as Iterable<unknown>)[Symbol.iterator]();
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done || gone) break;
      const chunk = next.value;
      const written = sse
        ? response.write(sseEvent(chunk))
        : response.write(
            typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : `${JSON.stringify(chunk)}\n`,
          );
      if (!written && !gone)
        await new Promise<void>((resolve) => response.once('drain', resolve).once('close', resolve));
    }
    if (gone) await iterator.return?.();
    else if (sse) response.write(sseEvent({ request_id: requestId }, 'end'));
  } catch (error) {
    if (sse && !gone)
      response.write(sseEvent({ message: (error as Error)?.message ?? String(error), request_id: requestId }, 'error'));
    else if (!gone) response.destroy(error as Error);
  } finally {
    response.off('close', onClose);
    if (!response.destroyed) response.end();
  }
}
