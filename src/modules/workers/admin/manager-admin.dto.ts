import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

const WORKER_TYPES = ['http', 'ws'] as const;
const WORKER_ID = /^(http|ws)_[A-Za-z0-9_-]{1,64}$/;

export class ScaleDto {
  @ApiProperty({ enum: WORKER_TYPES, example: 'http' })
  @IsIn(WORKER_TYPES)
  type!: 'http' | 'ws';

  @ApiProperty({ type: Number, example: 4, description: 'Target number of live workers of that type' })
  @IsInt()
  @Min(0)
  @Max(256)
  count!: number;
}

export class StartWorkersDto {
  @ApiProperty({ enum: WORKER_TYPES, example: 'http' })
  @IsIn(WORKER_TYPES)
  type!: 'http' | 'ws';

  @ApiPropertyOptional({
    type: Number,
    example: 1,
    description: 'How many new workers (default 1; not with worker_id)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(256)
  count?: number;

  @ApiPropertyOptional({
    example: 'http_1a2b3c4d',
    description: 'Start this id (a stopped or failed one restarts on its old port)',
  })
  @IsOptional()
  @Matches(WORKER_ID, { message: 'worker_id must look like http_<id> or ws_<id>' })
  worker_id?: string;
}

export class WorkerIdDto {
  @ApiProperty({ example: 'http_1a2b3c4d' })
  @Matches(WORKER_ID, { message: 'worker_id must look like http_<id> or ws_<id>' })
  worker_id!: string;
}

export class StopWorkerDto extends WorkerIdDto {
  @ApiPropertyOptional({ type: Boolean, default: true, description: 'Drain first (false: SIGKILL at once)' })
  @IsOptional()
  @IsBoolean()
  graceful?: boolean;
}

export class WorkerMetricsDto {
  @ApiProperty() requests!: number;
  @ApiProperty({ description: 'HTTP: requests in flight; WS: open connections' }) connections!: number;
  @ApiProperty() errors!: number;
  @ApiProperty() avg_latency_ms!: number;
  @ApiProperty({ type: Number, nullable: true }) memory_mb!: number | null;
}

export class WorkerInfoDto {
  @ApiProperty({ example: 'http_1a2b3c4d' }) worker_id!: string;
  @ApiProperty({ enum: WORKER_TYPES }) type!: string;
  @ApiProperty({ enum: WORKER_TYPES }) worker_type!: string;
  @ApiProperty({ type: Number, nullable: true }) pid!: number | null;
  @ApiProperty() port!: number;
  @ApiProperty({ enum: ['starting', 'running', 'draining', 'stopping', 'stopped', 'failed'] }) state!: string;
  @ApiProperty() healthy!: boolean;
  @ApiProperty({ type: Number, nullable: true }) health_latency_ms!: number | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) last_health_check!: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) started_at!: string | null;
  @ApiProperty() restart_count!: number;
  @ApiProperty({ type: String, nullable: true }) last_error!: string | null;
  @ApiProperty({ example: 'local', description: '"local", or the cluster node "host:port" that reported it' })
  node!: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Seconds since its process started' })
  uptime!: number | null;
  @ApiProperty({ type: WorkerMetricsDto }) metrics!: WorkerMetricsDto;
}

export class RollingUpdateDto {
  @ApiProperty({ example: 'ru_1a2b3c4d' }) id!: string;
  @ApiProperty({ enum: ['running', 'done', 'failed'] }) state!: string;
  @ApiProperty({ format: 'date-time' }) started_at!: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) finished_at!: string | null;
  @ApiProperty({ description: 'HTTP workers to replace' }) total!: number;
  @ApiProperty({ description: 'HTTP workers handled so far' }) done!: number;
  @ApiProperty({ example: 'draining http_1a2b3c4d, http_5e6f7a8b' }) step!: string;
  @ApiProperty({
    type: 'array',
    items: {
      type: 'object',
      properties: {
        old: { type: 'string' },
        new: { type: 'string' },
        drain_ms: { type: 'number', description: 'How long the old worker took to drain and exit' },
      },
    },
  })
  replaced!: { old: string; new: string; drain_ms: number }[];
  @ApiProperty({ type: [String] }) errors!: string[];
}

export class ProxyStatusDto {
  @ApiProperty() installed!: boolean;
  @ApiProperty({ type: String, nullable: true, example: 'nginx/1.22.1' }) version!: string | null;
  @ApiProperty({ description: 'The generated site config exists' }) configured!: boolean;
  @ApiProperty({ type: String, nullable: true }) site_path!: string | null;
}

export class ClusterNodeDto {
  @ApiProperty({ example: '10.0.0.2:9005', description: 'host:port of the node’s admin API' }) id!: string;
  @ApiProperty({ example: '10.0.0.2' }) host!: string;
  @ApiProperty({ example: 9005 }) port!: number;
  @ApiProperty({ description: 'Its last poll answered' }) healthy!: boolean;
  @ApiProperty({ format: 'date-time' }) joined_at!: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) last_seen!: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) last_poll!: string | null;
  @ApiProperty({ type: String, nullable: true }) last_error!: string | null;
  @ApiProperty({ type: [WorkerInfoDto], description: 'Its own workers (node = its id); empty while unhealthy' })
  workers!: WorkerInfoDto[];
}

export class ClusterSummaryDto {
  @ApiProperty() nodes!: number;
  @ApiProperty() healthy_nodes!: number;
  @ApiProperty({ type: [ClusterNodeDto] }) members!: ClusterNodeDto[];
}

export class JoinClusterDto {
  @ApiProperty({ example: '10.0.0.2', description: 'Host name or IP address of the remote manager' })
  @Matches(/^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|[0-9A-Fa-f:.]+)$/, { message: 'host must be a host name or IP address' })
  @MaxLength(253)
  host!: string;

  @ApiProperty({ example: 9005, description: 'Its admin API port (MANAGER_PORT there)' })
  @IsInt()
  @Min(1)
  @Max(65535)
  port!: number;

  @ApiPropertyOptional({ description: 'Its X-Cluster-Secret (default: ours, i.e. the shared CLUSTER_SECRET)' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  secret?: string;
}

export class ClusterJoinResultDto {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ type: ClusterNodeDto }) node!: ClusterNodeDto;
}

export class ClusterVerifyDto {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ description: 'Random per manager process (a manager refuses to join itself)' }) instance!: string;
}

export class ServiceAddressDto {
  @ApiProperty({ description: 'The address the service listens on (0.0.0.0 = every interface)', example: '0.0.0.0' })
  host!: string;
  @ApiProperty({ example: 4025 }) port!: number;
}

export class ClusterServicesDto {
  @ApiProperty({ type: ServiceAddressDto, description: 'The registry this node’s nginx site fronts at /registry/' })
  registry!: ServiceAddressDto;
  @ApiProperty({ type: ServiceAddressDto, description: 'The MCP transport this node’s nginx site fronts at /mcp' })
  mcp!: ServiceAddressDto;
}

export class BrokerDto {
  @ApiProperty({ enum: ['ipc', 'redis', 'local'] }) driver!: string;
  @ApiProperty() alive!: boolean;
}

export class ManagerStatusDto {
  @ApiProperty() running!: boolean;
  @ApiProperty() pid!: number;
  @ApiProperty({ format: 'date-time' }) started_at!: string;
  @ApiProperty({ example: 'linux' }) platform!: string;
  @ApiProperty() broker_alive!: boolean;
  @ApiProperty({ type: BrokerDto }) broker!: BrokerDto;
  @ApiProperty({ type: String, nullable: true }) api!: string | null;
  @ApiProperty({ type: String, nullable: true }) ui!: string | null;
  @ApiProperty({
    description: 'The pre-allocated ports per worker type',
    example: { http: [8000, 8001], ws: [8100] },
  })
  port_slots!: { http: number[]; ws: number[] };
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/WorkerInfoDto' } })
  workers!: Record<string, WorkerInfoDto>;
  @ApiProperty({ type: ProxyStatusDto }) nginx!: ProxyStatusDto;
  @ApiProperty({ type: ClusterSummaryDto }) cluster!: ClusterSummaryDto;
  @ApiProperty({ type: RollingUpdateDto, nullable: true }) rolling_update!: RollingUpdateDto | null;
}

export class WorkerHealthDto {
  @ApiProperty() healthy!: boolean;
  @ApiProperty() state!: string;
  @ApiProperty({ type: Number, nullable: true }) latency_ms!: number | null;
}

export class ManagerHealthDto {
  @ApiProperty({ description: 'Every worker healthy (and at least one)' }) healthy!: boolean;
  @ApiProperty({ type: BrokerDto }) broker!: BrokerDto;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/WorkerHealthDto' } })
  workers!: Record<string, WorkerHealthDto>;
  @ApiProperty({ type: ProxyStatusDto }) nginx!: ProxyStatusDto;
}

export class ManagerMetricsDto {
  @ApiProperty() total_workers!: number;
  @ApiProperty() http_workers!: number;
  @ApiProperty() ws_workers!: number;
  @ApiProperty() total_requests!: number;
  @ApiProperty() total_connections!: number;
  @ApiProperty() total_errors!: number;
  @ApiProperty() avg_latency_ms!: number;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) collected_at!: string | null;
}

export class ScaleResultDto {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ type: [String] }) started!: string[];
  @ApiProperty({ type: [String] }) stopped!: string[];
}

export class StartedWorkersDto {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ type: [WorkerInfoDto] }) workers!: WorkerInfoDto[];
}

export class WorkerResultDto {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ type: WorkerInfoDto }) worker!: WorkerInfoDto;
}

export class AcceptedDto {
  @ApiProperty({ example: 'accepted' }) status!: string;
}

export class RollingUpdateAcceptedDto extends AcceptedDto {
  @ApiProperty({ type: RollingUpdateDto }) rolling_update!: RollingUpdateDto;
}

export class ProxyReloadDto {
  @ApiProperty({ enum: ['ok', 'error'] }) status!: string;
  @ApiProperty() message!: string;
}
