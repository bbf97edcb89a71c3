import { ApiProperty } from '@nestjs/swagger';

/** `GET /metrics` of a WebSocket worker. */
export class WsWorkerMetricsDto {
  @ApiProperty({ type: String, example: 'ws_1a2b3c4d' }) worker_id: string;
  @ApiProperty({ type: Number }) pid: number;
  @ApiProperty({ type: Number }) uptime_seconds: number;
  @ApiProperty({ type: String, enum: ['local', 'redis', 'ipc'], description: 'The message broker driver' })
  broker: string;
  @ApiProperty({ type: Number, description: 'Open connections' }) connections: number;
  @ApiProperty({ type: Number, description: 'Connections accepted since start (refused ones are counted below)' })
  connections_total: number;
  @ApiProperty({ type: Number, description: 'Messages received from clients' }) messages_received: number;
  @ApiProperty({ type: Number, description: 'Handler calls that threw' }) handler_errors: number;
  @ApiProperty({ type: Number, description: 'Closed with 1008: bad credential or none where one is needed' })
  refused_unauthorized: number;
  @ApiProperty({ type: Number, description: 'Closed with 1008: level too low' }) refused_forbidden: number;
  @ApiProperty({ type: Number, description: 'Closed with 1013: WS_MAX_CONNECTIONS reached' })
  refused_overloaded: number;
  @ApiProperty({ type: Number, description: 'Upgrades refused with 404/409: no such handler' })
  refused_not_found: number;
  @ApiProperty({ type: Number, description: 'Upgrades refused with 403: Origin of a page that may not connect' })
  refused_origin: number;
  @ApiProperty({ type: Number, description: 'Closed with 1008: the client address holds WS_MAX_CONNECTIONS_PER_IP' })
  refused_per_address: number;
  @ApiProperty({ type: Number, description: 'Closed with 1008: the user holds WS_MAX_CONNECTIONS_PER_USER' })
  refused_per_user: number;
  @ApiProperty({
    type: Number,
    description: 'Closed with 1013: anonymous, and only the share kept for signed-in users is left',
  })
  refused_anonymous_share: number;
}
