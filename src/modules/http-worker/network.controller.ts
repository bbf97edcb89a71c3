import { Body, Controller, Get, HttpCode, Inject, Logger, Post, Req } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../auth/access.decorators.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { ApiErrors } from '../../common/openapi.js';
import { isLocalAddress, normaliseAddress } from '../app-core/index.js';
import { parseClientLogs } from './client-logs.js';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
import { ClientLogsAnswerDto, IpAnswerDto } from './http-worker.responses.js';

/** `/api/ip` (the caller's address, from the probe's pieces) and `POST /api/client-logs` (web and app clients' logs). */
@ApiTags('worker')
@Public()
@Controller('api')
export class NetworkController {
  private readonly clientLogger = new Logger('ClientLogs');

  constructor(@Inject(HTTP_WORKER_OPTIONS) private readonly options: HttpWorkerOptions) {}

  @Get('ip')
  @ApiOkResponse({
    description: "The caller's address as this worker sees it (behind a proxy on loopback: X-Forwarded-For)",
    type: IpAnswerDto,
  })
  ip(@Req() request: Request): IpAnswerDto {
    const ip = normaliseAddress(request.ip ?? request.socket.remoteAddress ?? '');
    return { ip, local: isLocalAddress(ip) };
  }

  @Post('client-logs')
  @HttpCode(200)
  @ApiBody({
    description:
      '{"logs": [{"level": "error", "message": "…", "timestamp": "…", "source": "…"}]}, an array, or one entry',
    schema: { type: 'object' },
  })
  @ApiOkResponse({ description: 'Written to the worker log', type: ClientLogsAnswerDto })
  @ApiErrors({ 400: 'Not a list of log entries', 413: 'Body over CLIENT_LOG_MAX_BYTES' })
  clientLogs(@Body() body: unknown, @Req() request: Request & AuthenticatedRequest): ClientLogsAnswerDto {
    const declared = Number(request.headers['content-length'] ?? 0);
    const size = declared > 0 ? declared : Buffer.byteLength(JSON.stringify(body ?? null));
    if (size > this.options.clientLogMaxBytes)
      throw new PlatformError(
        'PAYLOAD_TOO_LARGE',
        `Client logs are limited to ${this.options.clientLogMaxBytes} bytes per request`,
      );
    const parsed = parseClientLogs(body);
    if (typeof parsed === 'string') throw new PlatformError('BAD_REQUEST', parsed);
    const who = request.principal ? `user ${request.principal.platformUserId}` : 'anonymous';
    const from = `${who} at ${request.ip ?? 'unknown'}`;
    for (const entry of parsed.entries) {
      const line = `[${from}${entry.source ? ` ${entry.source}` : ''}${entry.timestamp ? ` ${entry.timestamp}` : ''}] ${entry.message}`;
      if (entry.level === 'error') this.clientLogger.error(line);
      else if (entry.level === 'warn') this.clientLogger.warn(line);
      else if (entry.level === 'debug') this.clientLogger.debug(line);
      else this.clientLogger.log(line);
    }
    return { status: 'ok', ingested: parsed.entries.length, dropped: parsed.dropped };
  }
}
