import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { runInRequestContext } from '../logging/request-context.js';

const ACCEPTED_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Each request's id, beside the request rather than as a property of it: a property added to Node's request object
 * copies its property store and changes its map on every request (measured: docs/http-worker.md, benchmark).
 */
const requestIds = new WeakMap<object, string>();

/**
 * Every request gets an id (the caller's X-Request-Id when sane), echoed back and used in errors; the
 * rest of the request runs in its context, so every log line written while handling it carries the id.
 */
export function requestIdMiddleware(request: Request, response: Response, next: NextFunction): void {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTED_ID.test(given) ? given : randomUUID();
  requestIds.set(request, id);
  response.setHeader('X-Request-Id', id);
  runInRequestContext(id, next);
}

/** The id `requestIdMiddleware` gave the request, or 'unknown' for one it never saw. */
export function requestIdOf(request: unknown): string {
  if (typeof request !== 'object' || request === null) return 'unknown';
  return requestIds.get(request) ?? 'unknown';
}
