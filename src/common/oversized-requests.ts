import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { errorBody, type ErrorFormat } from './error-formats.js';
import { ERROR_STATUS, PlatformError } from './errors.js';

/** The longest request target (path and query) answered; longer gets 414 URI_TOO_LONG. */
export const MAX_URL_LENGTH = 8 * 1024;

/** Express middleware: a request target over MAX_URL_LENGTH answers a JSON 414 in the error shape. */
export function rejectLongUrls(request: Request, _response: Response, next: NextFunction): void {
  if (request.originalUrl.length > MAX_URL_LENGTH) {
    next(new PlatformError('URI_TOO_LONG', `The request URL is longer than ${MAX_URL_LENGTH} characters`));
    return;
  }
  next();
}

/**
 * Node answers a request line plus headers over its limit (16 KiB) with a bare 431 and a malformed
 * request with a bare 400, before any route runs: answer both in the service's JSON error shape instead.
 */
export function answerClientErrorsAsJson(server: Server, format: ErrorFormat): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const code = tooLarge ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST';
    const status = ERROR_STATUS[code];
    const message = tooLarge
      ? 'The request line and headers are larger than the server accepts (16 KiB)'
      : 'Malformed HTTP request';
    const requestId = randomUUID();
    const body = JSON.stringify(errorBody(format, { status, code, message, requestId }));
    const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
    // A HEAD request's answer has no body: the client would read one as the next (garbled) response.
    const head =
      (error as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString() === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n` +
        (head ? '' : body),
    );
  });
}
