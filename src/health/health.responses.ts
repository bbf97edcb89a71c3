import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

/** Response bodies of the liveness and readiness probes. */

export class HealthDto {
  @ApiProperty({ type: String, enum: ['ok'] })
  status: 'ok';

  @ApiProperty({ type: String, example: '0.1.0' })
  version: string;

  @ApiProperty({ type: Number, example: 12 })
  uptime_seconds: number;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'The model gateway: the time of the answer' })
  timestamp?: string;

  @ApiPropertyOptional({
    type: Number,
    example: 3,
    description: 'The model gateway: the models the runtime has installed, as last seen (no runtime call)',
  })
  active_models?: number;
}

/** One dependency's answer (@nestjs/terminus). */
export class DependencyCheckDto {
  @ApiProperty({ type: String, enum: ['up', 'down'] })
  status: string;

  @ApiProperty({ type: String, required: false, description: 'Why it is down' })
  message?: string;

  @ApiProperty({ type: Number, required: false, description: 'milliseconds the check took' })
  responseTime?: number;
}

const CHECKS = {
  type: 'object',
  additionalProperties: { $ref: getSchemaPath(DependencyCheckDto) },
  example: { database: { status: 'up' }, storage: { status: 'up' }, queue: { status: 'up' } },
  description: 'Dependency name (database, storage, queue, redis) → its answer',
} as const;

@ApiExtraModels(DependencyCheckDto)
export class ReadinessDto {
  @ApiProperty({ type: String, enum: ['ready'] })
  status: 'ready';

  @ApiProperty(CHECKS)
  checks: Record<string, DependencyCheckDto>;
}

@ApiExtraModels(DependencyCheckDto)
export class ReadinessFailureDto {
  @ApiProperty({ type: String, enum: ['unavailable'] })
  status: 'unavailable';

  @ApiProperty({ type: [String], example: ['storage'] })
  failed: string[];

  @ApiProperty({ type: String, example: 'Not ready: storage did not answer' })
  message: string;

  @ApiProperty(CHECKS)
  checks: Record<string, DependencyCheckDto>;
}
