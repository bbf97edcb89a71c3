import type { NextFunction, Request, Response } from 'express';
import { PlatformError } from '../../../common/errors.js';
import { ApiErrors } from '../../../common/openapi.js';

/** Methods that change nothing: a page of another site may send them, it cannot read the answer. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `application/json` or a `+json` type, with or without parameters. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Whether a request may change state: only one a page of another site cannot send without CORS, which the manager
 * never grants. A form posts `application/x-www-form-urlencoded`, `multipart/form-data` or `text/plain`, and a
 * cross-site `fetch` in `no-cors` mode sends no other type and no custom header; so a JSON body or an
 * `X-Requested-With` header (any value) proves a script of a page allowed to call, or a client that is no browser.
 * This matters behind nginx, where the browser's Basic-auth session is turned into the manager secret.
 */
export function sentByScript(method: string, headers: Request['headers']): boolean {
  if (SAFE_METHODS.has(method.toUpperCase())) return true;
  if (headers['x-requested-with']) return true;
  return JSON_MEDIA_TYPE.test(headers['content-type'] ?? '');
}

/** Middleware of the admin API: a state-changing request a form could have sent is refused with 415. */
export function refuseCrossSiteForms(request: Request, _response: Response, next: NextFunction): void {
  if (sentByScript(request.method, request.headers)) return next();
  const type = request.headers['content-type'];
  next(
    new PlatformError(
      'UNSUPPORTED_MEDIA_TYPE',
      `${request.method} on the admin API takes Content-Type: application/json or an X-Requested-With header ` +
        `(${type ? `got ${type}` : 'got neither'}): a form of another site can send neither`,
    ),
  );
}

/** Documents the 415 on a state-changing route of the admin API. */
export const ApiRefusesForms = () =>
  ApiErrors({ 415: 'Neither a JSON body nor X-Requested-With: what a form of another site could send' });
