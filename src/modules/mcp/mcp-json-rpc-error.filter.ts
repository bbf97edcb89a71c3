import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { PlatformError } from '../../common/errors.js';
import { PlatformExceptionFilter } from '../../common/exception.filter.js';
import { jsonRpcError } from './mcp-doors.service.js';

/**
 * On the Streamable HTTP routes (`/mcp`), what the one AuthGuard refuses (no key, a bad key) is answered as MCP
 * clients expect there: a JSON-RPC error body with the HTTP status, not the REST door's error body.
 */
@Catch()
export class McpJsonRpcErrorFilter implements ExceptionFilter {
  private readonly fallback = new PlatformExceptionFilter('json-rpc');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof PlatformError && !response.headersSent) {
      jsonRpcError(response, exception.status, exception.message);
      return;
    }
    this.fallback.catch(exception, host);
  }
}
