import { SetMetadata, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { from, mergeMap, type Observable } from 'rxjs';
import { bodyTooLarge, jsonBodyReader, type JsonBodyReader } from './json-body.js';

export const BODY_LIMIT_METADATA = 'tb:body-limit';

/** A route's body cap: a name the service maps to bytes, and whether the route reads the stream itself. */
export interface BodyLimitRule {
  name: string;
  /** The route streams the body itself (multipart uploads): only the declared length is checked here. */
  streamed?: boolean;
}

/**
 * Names the cap of a route's body (a key of the service's `routeBodyLimits`); a route without one gets the
 * service's `bodyLimit`. Read by RequestBodyInterceptor, after the guards.
 */
export const BodyLimit = (name: string, options: { streamed?: boolean } = {}) =>
  SetMetadata(BODY_LIMIT_METADATA, { name, ...options } satisfies BodyLimitRule);

/** How long the connection of a refused upload stays open for the client to read the answer. */
export const REFUSED_BODY_CLOSE_MS = 2000;

function hasBody(request: Request): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return false;
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/**
 * Reads JSON bodies after the guards have run, so a request without a valid credential is refused from its
 * headers alone and a body is never buffered for a caller who may not send one. Each route's cap is decided
 * from Content-Length before a byte is read, and counted while streaming when the length is not declared;
 * over the cap is a 413 at once (the unread rest is left to closeRefusedUploads).
 */
export class RequestBodyInterceptor implements NestInterceptor {
  private readonly readers = new Map<number, JsonBodyReader>();

  constructor(
    private readonly reflector: Reflector,
    private readonly limits: { defaultBytes: number; routes: Record<string, number> },
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    if (!hasBody(request)) return next.handle();
    const rule = this.reflector.getAllAndOverride<BodyLimitRule | undefined>(BODY_LIMIT_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    const limit = this.limitOf(rule);
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) throw bodyTooLarge(limit);
    // Other media types are left unread for the route, as before (a JSON route then sees no body).
    if (rule?.streamed || !request.is('application/json')) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    return from(this.readJson(request, response, limit)).pipe(mergeMap(() => next.handle()));
  }

  private limitOf(rule: BodyLimitRule | undefined): number {
    if (!rule) return this.limits.defaultBytes;
    const limit = this.limits.routes[rule.name];
    // A route naming a cap the service does not define is a programming error, not the caller's.
    if (limit === undefined) throw new Error(`No body limit named "${rule.name}" is configured for this service`);
    return limit;
  }

  /** The one JSON reader (json-body.ts), answering 413 as soon as the route's cap is passed. */
  private readJson(request: Request, response: Response, limit: number): Promise<void> {
    let read = this.readers.get(limit);
    if (!read) {
      read = jsonBodyReader(limit, { answerPastLimit: true });
      this.readers.set(limit, read);
    }
    return read(request, response);
  }
}

/**
 * Express middleware: when a request is answered before its body was read (a 401 from the guard, a 413 from
 * the cap, a 404), the rest of the body is not read: the request is paused, so the socket stops reading once
 * its buffers are full, and the connection is closed REFUSED_BODY_CLOSE_MS after the answer unless the body
 * ends first. The delay lets a client that is still sending read the answer before the connection goes.
 */
export function closeRefusedUploads(request: Request, response: Response, next: NextFunction): void {
  response.on('finish', () => {
    if (request.complete || !hasBody(request)) return;
    // Node's own handling (and body-parser after an overflow) would read the rest to its end to discard it.
    request.pause();
    const timer = setTimeout(() => request.socket.destroy(), REFUSED_BODY_CLOSE_MS);
    timer.unref();
    request.once('end', () => clearTimeout(timer));
  });
  next();
}
