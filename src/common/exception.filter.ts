import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorBody, type DescribedError, type ErrorFormat } from './error-formats.js';
import { ERROR_STATUS, PlatformError, type ErrorCode } from './errors.js';
import { requestIdOf } from './request-id.middleware.js';

export type { ErrorFormat } from './error-formats.js';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'BAD_REQUEST',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'HEADERS_TOO_LARGE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * The one place where errors become HTTP: domain codes map to statuses, the service's format
 * (error-formats.ts) shapes the body, and a 500 never leaks internals (logged once).
 */
@Catch()
export class PlatformExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly format: ErrorFormat = 'registry') {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    const described = this.describe(exception, requestIdOf(request), request);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    response.status(described.status).json(errorBody(this.format, described));
  }

  private describe(exception: unknown, requestId: string, request: Request): DescribedError {
    if (exception instanceof PlatformError) {
      return {
        status: exception.status,
        code: exception.code,
        message: exception.message,
        requestId,
        errors: exception.fieldErrors,
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST');
      const raw = exception.getResponse();
      let message = exception.message;
      if (typeof raw === 'object' && raw !== null && 'message' in raw) {
        const inner = (raw as { message: unknown }).message;
        message = Array.isArray(inner) ? inner.join('; ') : String(inner);
      }
      if (status === 404 && message.startsWith('Cannot ')) message = `No route for ${request.method} ${request.path}`;
      if (status >= 500) return this.internal(exception, requestId);
      // Nest wraps body-parser's errors in a BadRequestException with the original as cause.
      const parseError = (exception.cause as { type?: string } | undefined)?.type === 'entity.parse.failed';
      return { status, code, message, requestId, ...(parseError ? { parseError } : {}) };
    }
    const errno = exception as { type?: string; status?: number; message?: string };
    // body-parser errors (malformed JSON, oversized bodies) carry a status and a type.
    if (typeof errno?.status === 'number' && errno.status >= 400 && errno.status < 500) {
      const code = CODE_BY_STATUS[errno.status] ?? 'BAD_REQUEST';
      const parseError = errno.type === 'entity.parse.failed';
      const message = parseError ? 'Request body is not valid JSON' : (errno.message ?? 'Bad request');
      return { status: ERROR_STATUS[code], code, message, requestId, ...(parseError ? { parseError } : {}) };
    }
    return this.internal(exception, requestId);
  }

  private internal(exception: unknown, requestId: string): DescribedError {
    const error = exception as Error;
    this.logger.error(`request ${requestId}: ${error?.stack ?? String(exception)}`);
    return { status: 500, code: 'INTERNAL_ERROR', message: `Internal server error (request ${requestId})`, requestId };
  }
}
