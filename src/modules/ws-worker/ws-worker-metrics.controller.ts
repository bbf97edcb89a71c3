import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { WsWorkerMetricsDto } from './ws-worker.responses.js';
import { WsWorkerServer } from './ws-worker.server.js';

const startedAt = Date.now();

/** The WS worker's counters, for the worker manager's metrics collector. */
@ApiTags('worker')
@Public()
@Controller()
export class WsWorkerMetricsController {
  constructor(private readonly server: WsWorkerServer) {}

  @Get('metrics')
  @ApiOkResponse({ description: 'Connection and message counters of this worker process', type: WsWorkerMetricsDto })
  metrics(): WsWorkerMetricsDto {
    const stats = this.server.stats;
    return {
      worker_id: this.server.workerId,
      pid: process.pid,
      uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
      broker: this.server.brokerDriver,
      connections: stats.connections,
      connections_total: stats.connectionsTotal,
      messages_received: stats.messagesReceived,
      handler_errors: stats.handlerErrors,
      refused_unauthorized: stats.refused.unauthorized,
      refused_forbidden: stats.refused.forbidden,
      refused_overloaded: stats.refused.overloaded,
      refused_not_found: stats.refused.not_found,
      refused_origin: stats.refused.origin,
      refused_per_address: stats.refused.per_address,
      refused_per_user: stats.refused.per_user,
      refused_anonymous_share: stats.refused.anonymous_share,
    };
  }
}
