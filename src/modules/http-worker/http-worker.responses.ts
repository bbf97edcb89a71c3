import { ApiProperty } from '@nestjs/swagger';

/** Response bodies of the HTTP worker's own routes. */

export class WorkerHealthDto {
  @ApiProperty({ type: String, enum: ['healthy', 'draining'] })
  status: 'healthy' | 'draining';

  @ApiProperty({ type: String, example: 'http-8000' })
  worker_id: string;

  @ApiProperty({ type: Number, example: 4242 })
  pid: number;

  @ApiProperty({ type: String, format: 'date-time' })
  timestamp: string;
}

export class WorkerMetricsDto {
  @ApiProperty({ type: String }) worker_id: string;
  @ApiProperty({ type: Number }) pid: number;
  @ApiProperty({ type: Number }) uptime_seconds: number;
  @ApiProperty({ type: Number, description: 'Requests answered' }) requests_total: number;
  @ApiProperty({ type: Number, description: 'Requests that came through a reverse proxy (X-Forwarded-For present)' })
  requests_proxied: number;
  @ApiProperty({ type: Number, description: 'Answers below 400' }) requests_success: number;
  @ApiProperty({ type: Number, description: 'Answers of 400 and above' }) requests_error: number;
  @ApiProperty({ type: Number, description: 'Answers of 500 and above' }) requests_server_error: number;
  @ApiProperty({ type: Number, description: '401 answers' }) auth_failures: number;
  @ApiProperty({ type: Number, description: '403 answers' }) access_denials: number;
  @ApiProperty({ type: Number, description: 'Requests being handled now' }) in_flight: number;
  @ApiProperty({ type: Number, description: 'Mean latency in milliseconds' }) avg_latency_ms: number;
  @ApiProperty({ type: Boolean }) draining: boolean;
}

export class ClientLogsAnswerDto {
  @ApiProperty({ type: String, enum: ['ok'] })
  status: 'ok';

  @ApiProperty({
    type: Number,
    description: 'Entries written to the log (the original worker answered the same field)',
  })
  ingested: number;

  @ApiProperty({ type: Number, description: 'Entries dropped (over the per-request count)' })
  dropped: number;
}

export class IpAnswerDto {
  @ApiProperty({ type: String, example: '127.0.0.1' })
  ip: string;

  @ApiProperty({ type: Boolean, description: 'Loopback or private address' })
  local: boolean;
}

export class ResultPayloadDto {
  @ApiProperty({ type: String, example: 'native' }) data_to: string;
  @ApiProperty({ type: String, example: '' }) data_info: string;
  @ApiProperty({ description: "The function's data (any JSON value)", nullable: true }) data: unknown;
  @ApiProperty({ type: String, example: 'object' }) data_type: string;
}

export class ResultInfoDto {
  @ApiProperty({
    type: Number,
    example: 0,
    description: '0 (or 200) on success; an HTTP status or a negative code on error',
  })
  exec_code: number;

  @ApiProperty({ type: String, example: 'OK' }) help_text: string;
}

/** The application core's Result on the wire (src/modules/app-core/result.ts). */
export class ResultWireDto {
  @ApiProperty({ type: String, enum: ['none', 'InputError', 'InternalError', 'CustomError'] }) error: string;
  @ApiProperty({ nullable: true }) origin: unknown;
  @ApiProperty({ type: ResultPayloadDto }) result: ResultPayloadDto;
  @ApiProperty({ type: ResultInfoDto }) info: ResultInfoDto;

  @ApiProperty({ type: String, required: false, description: 'Server errors (5xx) only: quote it when reporting' })
  request_id?: string;
}
