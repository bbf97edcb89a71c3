import { json } from 'body-parser';
import type { NextFunction, Request, Response } from 'express';
import { PlatformError } from './errors.js';
import { jsonDeeperThan, MAX_JSON_DEPTH } from './json-depth.js';

/**
 * The one reader of JSON request bodies, for every service and both moments a body is read: before routing
 * (jsonBodyMiddleware, most services) and after the guards (RequestBodyInterceptor, the gateway). It fills
 * `request.body` or fails with an error the service's exception filter answers in the service's own error
 * format (`registry`, `result`, `openai`, `json-rpc`): body-parser's typed errors for malformed JSON
 * (`entity.parse.failed`, JSON-RPC's -32700) and an oversized body, a PlatformError for the rest. Only
 * `application/json` bodies are read; any other media type is left unread for the route.
 */
export type JsonBodyReader = (request: Request, response: Response) => Promise<void>;

export interface JsonBodyReaderOptions {
  /**
   * Answer 413 as soon as the cap is passed while the body streams in (a PlatformError naming the cap), instead
   * of body-parser's answer once it has read the whole body. Needs `limit` in bytes.
   */
  answerPastLimit?: boolean;
}

/** The 413 of a body over its route's cap, decided from Content-Length or while counting. */
export function bodyTooLarge(limit: number): PlatformError {
  return new PlatformError('PAYLOAD_TOO_LARGE', `The request body is larger than this route accepts (${limit} bytes)`);
}

/** A reader capped at `limit` (bytes, or body-parser syntax: `2mb`). */
export function jsonBodyReader(limit: number | string, options: JsonBodyReaderOptions = {}): JsonBodyReader {
  const parse = json({ limit });
  if (options.answerPastLimit && typeof limit !== 'number') throw new Error('answerPastLimit needs the limit in bytes');
  return (request, response) =>
    new Promise<void>((resolve, reject) => {
      // body-parser reads an oversized body to its end before it reports it; counting here answers as the
      // cap is passed (the parser's own limit still bounds what a compressed body inflates to).
      let received = 0;
      const count = (chunk: Buffer) => {
        received += chunk.length;
        if (received > (limit as number)) {
          request.off('data', count);
          reject(bodyTooLarge(limit as number));
        }
      };
      if (options.answerPastLimit) request.on('data', count);
      parse(request, response, (error?: unknown) => {
        request.off('data', count);
        if (error) return reject(error as Error);
        // Validation and transformation recurse: a hostile nesting must stop here, not overflow the stack.
        if (jsonDeeperThan(request.body))
          return reject(new PlatformError('BAD_REQUEST', `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`));
        resolve();
      });
    });
}

/**
 * JSON bodies read before routing; multipart uploads are streamed by the routes that take them. GET and HEAD
 * carry no body, so the hottest requests skip the parser entirely.
 */
export function jsonBodyMiddleware(
  limit: number | string,
): (request: Request, response: Response, next: NextFunction) => void {
  const read = jsonBodyReader(limit);
  return (request, response, next) => {
    if (request.method === 'GET' || request.method === 'HEAD') return next();
    read(request, response).then(() => next(), next);
  };
}
