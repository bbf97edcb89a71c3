import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { runInRequestContext } from '../logging/request-context.js';

const ACCEPTED_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Every request gets an id (the caller's X-Request-Id when sane), echoed back and used in errors; the
 * rest of the request runs in its context, so every log line written while handling it carries the id.
 */
export function requestIdMiddleware(request: Request, response: Response, next: NextFunction): void {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTED_ID.test(given) ? given : randomUUID();
  (request as Request & { id: string }).id = id;
  response.setHeader('X-Request-Id', id);
  runInRequestContext(id, next);
}

export function requestIdOf(request: unknown): string {
  return (request as { id?: string })?.id ?? 'unknown';
}
