import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { GATEWAY_TIERS, type GatewayTier } from './entities/gateway-user.entity.js';
import {
  SIGNUP_STATUSES,
  SIGNUP_TIERS,
  type SignupStatus,
  type SignupTier,
} from './entities/gateway-signup-request.entity.js';
import { GatewayKeyDto, GatewayUserDto } from './accounts/accounts.dto.js';
import { MODEL_TYPES } from './model-routing.js';

export class ModelNameDto {
  @ApiProperty({ type: String, example: 'llama3.2:3b' })
  @IsString()
  @MaxLength(200)
  model: string;
}

export class LoadModelDto extends ModelNameDto {
  @ApiPropertyOptional({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '30m',
    description: 'How long the model stays loaded (Ollama syntax; -1 until unloaded). Default 30m.',
  })
  @IsOptional()
  @ValidateIf((_object, value) => typeof value !== 'number')
  @IsString()
  keep_alive?: string | number;
}

export class ModelStateDto {
  @ApiProperty({ type: String })
  model: string;

  @ApiPropertyOptional({ type: Boolean })
  loaded?: boolean;

  @ApiPropertyOptional({ type: Boolean })
  deleted?: boolean;
}

export class AdminModelDto {
  @ApiProperty({ type: String })
  name: string;

  @ApiProperty({ enum: MODEL_TYPES })
  type: string;

  @ApiProperty({ type: Number })
  size: number;

  @ApiProperty({ type: String })
  modified_at: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  details: Record<string, unknown>;

  @ApiProperty({ type: Boolean })
  loaded: boolean;

  @ApiProperty({ type: String, nullable: true })
  expires_at: string | null;

  @ApiProperty({ type: Boolean, description: 'A gateway slot: kept loaded, and loaded again when the gateway starts' })
  slot: boolean;

  @ApiProperty({ type: [String], description: 'Needs this model answers as the configured fallback' })
  fallback_for: string[];
}

export class AdminModelListDto {
  @ApiProperty({ type: [AdminModelDto] })
  models: AdminModelDto[];

  @ApiProperty({ type: [String], description: 'Loaded in the runtime now (/api/ps)' })
  running: string[];
}

export class SignupRequestDto {
  @ApiProperty({ type: String, example: 'ada@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ type: String, maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  note?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 500,
    description: "The original gateway clients' name for `note` (used when `note` is absent)",
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  message?: string;

  @ApiPropertyOptional({
    enum: SIGNUP_TIERS,
    description: 'The tier asked for; the admin decides what the approval grants (payg by default)',
  })
  @IsOptional()
  @IsIn(SIGNUP_TIERS)
  tier?: SignupTier;
}

export class SignupListQueryDto {
  @ApiPropertyOptional({ enum: SIGNUP_STATUSES })
  @IsOptional()
  @IsIn(SIGNUP_STATUSES)
  status?: SignupStatus;
}

export class ApproveSignupDto {
  @ApiPropertyOptional({ enum: GATEWAY_TIERS, default: 'payg' })
  @IsOptional()
  @IsIn(GATEWAY_TIERS)
  tier?: GatewayTier;

  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @IsOptional()
  @IsNumber()
  @Min(0)
  balance?: number;
}

export class SignupDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String })
  email: string;

  @ApiProperty({ type: String, nullable: true })
  note: string | null;

  @ApiProperty({ enum: SIGNUP_STATUSES })
  status: SignupStatus;

  @ApiProperty({ enum: SIGNUP_TIERS, nullable: true, description: 'The tier the applicant asked for' })
  requested_tier: SignupTier | null;

  @ApiProperty({ type: String, nullable: true })
  user_id: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  decided_at: string | null;
}

export class SignupListDto {
  @ApiProperty({ type: [SignupDto] })
  signups: SignupDto[];
}

export class ApprovedSignupDto {
  @ApiProperty({ type: SignupDto })
  signup: SignupDto;

  @ApiProperty({ type: GatewayUserDto })
  user: GatewayUserDto;

  @ApiProperty({ type: String, description: 'The new user’s first key, shown this once' })
  key: string;

  @ApiProperty({ type: GatewayKeyDto })
  key_info: GatewayKeyDto;
}

export class RuntimeStatusDto {
  @ApiProperty({ type: String })
  url: string;

  @ApiProperty({ type: Boolean })
  reachable: boolean;

  @ApiProperty({ type: String, nullable: true })
  version: string | null;

  @ApiProperty({ enum: ['bare', 'docker'] })
  backend_mode: string;

  @ApiProperty({ type: [String] })
  loaded_models: string[];
}

export class SystemDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { cores: 8, model: '…', load_average: [0.1, 0.2, 0.3] },
  })
  cpu: Record<string, unknown>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { total_bytes: 1, free_bytes: 1, process_rss_bytes: 1 },
  })
  memory: Record<string, unknown>;

  @ApiProperty({ type: 'array', items: { type: 'object' }, description: 'NVIDIA GPUs (nvidia-smi); empty without' })
  gpus: unknown[];

  @ApiProperty({ type: RuntimeStatusDto })
  runtime: RuntimeStatusDto;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { last_minute: 3, last_hour: 120 } })
  requests: Record<string, number>;

  @ApiProperty({ type: Number })
  host_uptime_seconds: number;

  @ApiProperty({ type: 'object', additionalProperties: true })
  gateway: Record<string, unknown>;
}

export class AdminKeyDto {
  @ApiProperty({ description: 'The new admin key, shown this once (only its SHA-256 is kept)', example: 'sk-tb-…' })
  admin_key: string;
}

export class GatewayConfigDto {
  @ApiProperty({ type: String, example: 'http://127.0.0.1:11434' })
  ollama_url: string;

  @ApiProperty({ enum: ['bare', 'docker'] })
  backend_mode: string;

  @ApiProperty({ type: String, description: 'Masked; change it in the file' })
  admin_key: string;

  @ApiProperty({ type: String, nullable: true, description: 'Masked on read; send a new value to change it' })
  hf_token: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { payg: 5, sub: 10 } })
  rate_limits: Record<string, number>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { chat: null, vision: 'llava', audio: null, embedding: null },
  })
  fallback_models: Record<string, string | null>;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { 'my-model:latest': 'vision' } })
  model_types: Record<string, string>;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { input_per_1k: 0.0005, output_per_1k: 0.0015 } })
  prices: Record<string, number>;

  @ApiProperty({ type: 'object', additionalProperties: true })
  model_prices: Record<string, unknown>;

  @ApiProperty({ type: Number, example: 1024 })
  reserve_tokens: number;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { 'llama3.2:latest': { keep_alive: '30m' } } })
  loaded_models: Record<string, unknown>;
}

export class UptimeDto {
  @ApiProperty({ type: String, format: 'date-time' })
  started_at: string;

  @ApiProperty({ type: Number })
  uptime_seconds: number;

  @ApiProperty({ type: Boolean })
  runtime_reachable: boolean;
}

export class TokenPriceDto {
  @ApiProperty({ type: Number, example: 0.0005, description: 'Currency per 1,000 prompt tokens' })
  input_per_1k: number;

  @ApiProperty({ type: Number, example: 0.0015, description: 'Currency per 1,000 completion tokens' })
  output_per_1k: number;
}

export class PricingDto {
  @ApiProperty({ type: TokenPriceDto, description: 'What PAYG users pay, unless model_prices names the model' })
  prices: TokenPriceDto;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { 'llama3.2:latest': { input_per_1k: 0.001 } } })
  model_prices: Record<string, TokenPriceDto>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { payg: 5, sub: 10 },
    description: 'Chat requests per minute per tier',
  })
  rate_limits: Record<string, number>;
}

export class PublicModelDto {
  @ApiProperty({ type: String })
  id: string;

  @ApiProperty({ enum: MODEL_TYPES })
  type: string;
}

export class PublicModelListDto {
  @ApiProperty({ type: [PublicModelDto] })
  models: PublicModelDto[];
}

export class HubSearchQueryDto {
  @ApiProperty({ type: String, example: 'qwen3 gguf' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  q: string;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

export class HubModelDto {
  @ApiProperty({ type: String, example: 'Qwen/Qwen3-0.6B-GGUF' })
  id: string;

  @ApiProperty({ type: Number })
  downloads: number;

  @ApiProperty({ type: Number })
  likes: number;

  @ApiProperty({ type: [String] })
  tags: string[];
}

export class HubSearchResultDto {
  @ApiProperty({ type: [HubModelDto] })
  models: HubModelDto[];
}

export class HubFilesQueryDto {
  @ApiProperty({ type: String, example: 'Qwen/Qwen3-0.6B-GGUF' })
  @IsString()
  @MaxLength(200)
  repo: string;

  @ApiPropertyOptional({ type: String, default: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  revision?: string;
}

export class HubFileDto {
  @ApiProperty({ type: String, example: 'Qwen3-0.6B-Q8_0.gguf' })
  path: string;

  @ApiProperty({ type: Number })
  size: number;

  @ApiProperty({ type: String, nullable: true })
  sha256: string | null;
}

export class HubFileListDto {
  @ApiProperty({ type: [HubFileDto] })
  files: HubFileDto[];
}

export class HubDownloadDto {
  @ApiProperty({ type: String, example: 'Qwen/Qwen3-0.6B-GGUF' })
  @IsString()
  @MaxLength(200)
  repo: string;

  @ApiProperty({ type: String, example: 'Qwen3-0.6B-Q8_0.gguf' })
  @IsString()
  @MaxLength(300)
  file: string;

  @ApiPropertyOptional({ type: String, description: 'Model name to create; default <repo>:<quantization>' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: String, default: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  revision?: string;
}

export class ImportGgufDto {
  @ApiProperty({ type: 'string', format: 'binary' })
  file: unknown;

  @ApiProperty({ type: String, example: 'my-model:q4' })
  name: string;
}
