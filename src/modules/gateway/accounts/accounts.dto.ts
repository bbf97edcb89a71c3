import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsEmail, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { GATEWAY_TIERS, type GatewayTier } from '../entities/gateway-user.entity.js';
import { MAX_ADMIN_AMOUNT } from './money.js';

export class CreateGatewayUserDto {
  @ApiProperty({ type: String, example: 'ada@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ enum: GATEWAY_TIERS, default: 'payg' })
  @IsOptional()
  @IsIn(GATEWAY_TIERS)
  tier?: GatewayTier;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    maximum: MAX_ADMIN_AMOUNT,
    default: 0,
    description: 'Starting balance (currency units, rounded to 0.000001); 422 outside the range',
  })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(MAX_ADMIN_AMOUNT)
  balance?: number;

  @ApiPropertyOptional({ type: Boolean, default: true })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

export class UpdateGatewayUserDto {
  @ApiPropertyOptional({ enum: GATEWAY_TIERS })
  @IsOptional()
  @IsIn(GATEWAY_TIERS)
  tier?: GatewayTier;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    maximum: MAX_ADMIN_AMOUNT,
    description:
      'Sets the settled balance (holds of calls in flight stay open); the difference is recorded as an adjustment. 422 outside the range',
  })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(MAX_ADMIN_AMOUNT)
  balance?: number;
}

export class TopUpDto {
  @ApiProperty({
    type: Number,
    example: 10,
    minimum: 0.000001,
    maximum: MAX_ADMIN_AMOUNT,
    description: `Currency units, rounded to 0.000001; 422 outside the range or when the balance would pass ${MAX_ADMIN_AMOUNT}`,
  })
  @IsNumber()
  @Min(0.000001)
  @Max(MAX_ADMIN_AMOUNT)
  amount: number;

  @ApiPropertyOptional({ type: String, maxLength: 255 })
  @IsOptional()
  @IsString()
  note?: string;
}

export class IssueKeyDto {
  @ApiPropertyOptional({ type: String, default: 'default', example: 'laptop' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9 ._-]{1,100}$/, { message: 'name must be 1 to 100 letters, digits, spaces, ".", "_" or "-"' })
  name?: string;
}

export class UsageQueryDto {
  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: 366, default: 30 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(366)
  days?: number;
}

export class GatewayUserDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String })
  email: string;

  @ApiProperty({ enum: GATEWAY_TIERS })
  tier: GatewayTier;

  @ApiProperty({
    type: Number,
    description:
      'The settled balance (currency units): the sum of the ledger; see docs/gateway.md for how far below 0 it may go',
  })
  balance: number;

  @ApiProperty({ type: Number, description: 'What calls in flight hold of the balance' })
  held: number;

  @ApiProperty({ type: Number, description: 'What a new call may hold: balance − held' })
  available: number;

  @ApiProperty({ type: Boolean })
  active: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export class GatewayKeyDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String })
  name: string;

  @ApiProperty({ type: String, example: 'sk-tb-0123abcd' })
  key_prefix: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revoked_at: string | null;
}

export class IssuedKeyDto extends GatewayKeyDto {
  @ApiProperty({ type: String, description: 'The key itself, shown this once', example: 'sk-tb-<48 hex>' })
  key: string;
}

export class GatewayUserWithKeysDto extends GatewayUserDto {
  @ApiProperty({ type: [GatewayKeyDto] })
  keys: GatewayKeyDto[];
}

export class GatewayUserListDto {
  @ApiProperty({ type: [GatewayUserDto] })
  users: GatewayUserDto[];
}

/** Requests, tokens and cost of a set of calls (a window, a model, a day). */
export class UsageFiguresDto {
  @ApiProperty({ type: Number })
  requests: number;

  @ApiProperty({ type: Number })
  prompt_tokens: number;

  @ApiProperty({ type: Number })
  completion_tokens: number;

  @ApiProperty({ type: Number })
  cost: number;
}

export class UsageByModelDto extends UsageFiguresDto {
  @ApiProperty({ type: String })
  model: string;
}

export class UsageDayDto extends UsageFiguresDto {
  @ApiProperty({ type: String, format: 'date', example: '2026-03-10', description: 'UTC calendar day' })
  date: string;
}

/** Calls that failed: kept with the tokens the runtime reported, never billed, left out of every other figure. */
export class UsageFailedDto {
  @ApiProperty({ type: Number })
  requests: number;

  @ApiProperty({ type: Number })
  prompt_tokens: number;

  @ApiProperty({ type: Number })
  completion_tokens: number;
}

/** Billed calls (answered, or cut short by the client) in total, per model (`m` and `m:latest` are one) and per day. */
export class UsageSummaryDto extends UsageFiguresDto {
  @ApiProperty({ type: Number })
  days: number;

  @ApiProperty({ type: UsageFailedDto })
  failed: UsageFailedDto;

  @ApiProperty({ type: [UsageByModelDto] })
  by_model: UsageByModelDto[];

  @ApiProperty({ type: [UsageDayDto], description: 'Every day of the window, oldest first (zeros included)' })
  by_day: UsageDayDto[];
}

export class RateLimitStatusDto {
  @ApiProperty({ enum: GATEWAY_TIERS })
  tier: GatewayTier;

  @ApiProperty({ type: Number, nullable: true, description: 'Requests per minute; null: unlimited' })
  limit: number | null;

  @ApiProperty({ type: Number, nullable: true })
  remaining: number | null;

  @ApiProperty({ type: Number })
  used: number;
}
