import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ERROR_STATUS, PlatformError, type ErrorCode, type FieldError } from './errors.js';
import { requestIdOf } from './request-id.middleware.js';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'BAD_REQUEST',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'BAD_REQUEST',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  detail: string;
  request_id: string;
  errors?: FieldError[];
}

/**
 * The one place where errors become HTTP: domain codes map to statuses, the body has the wire shape
 * `{code, message, detail, request_id[, errors]}`, and a 500 never leaks internals (logged once).
 */
@Catch()
export class PlatformExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<Request>();
    const response = context.getResponse<Response>();
    const requestId = requestIdOf(request);
    const { status, body } = this.describe(exception, requestId, request);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    response.status(status).json(body);
  }

  private describe(exception: unknown, requestId: string, request: Request): { status: number; body: ErrorBody } {
    const body = (code: ErrorCode, message: string, errors?: FieldError[]): ErrorBody => ({
      code,
      message,
      detail: message,
      request_id: requestId,
      ...(errors && errors.length > 0 ? { errors } : {}),
    });

    if (exception instanceof PlatformError) {
      return { status: exception.status, body: body(exception.code, exception.message, exception.fieldErrors) };
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
      if (status >= 500) return this.internal(exception, requestId, body);
      return { status, body: body(code, message) };
    }
    const errno = exception as { type?: string; status?: number; message?: string };
    // body-parser errors (malformed JSON, oversized bodies) carry a status and a type.
    if (typeof errno?.status === 'number' && errno.status >= 400 && errno.status < 500) {
      const code = CODE_BY_STATUS[errno.status] ?? 'BAD_REQUEST';
      const message = errno.type === 'entity.parse.failed' ? 'Request body is not valid JSON' : (errno.message ?? 'Bad request');
      return { status: ERROR_STATUS[code], body: body(code, message) };
    }
    return this.internal(exception, requestId, body);
  }

  private internal(exception: unknown, requestId: string, body: (code: ErrorCode, message: string) => ErrorBody) {
    const error = exception as Error;
    this.logger.error(`request ${requestId}: ${error?.stack ?? String(exception)}`);
    return { status: 500, body: body('INTERNAL_ERROR', `Internal server error (request ${requestId})`) };
  }
}
