import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Response bodies of WorkerAuth (the Result envelope of the original worker). */

export class SessionDataDto {
  @ApiProperty({ type: Boolean, example: true }) authenticated: boolean;
  @ApiProperty({ type: String, description: 'The cookie session id' }) session_id: string;
  @ApiProperty({ type: String, example: 'usr_0123456789abcdef01234567' }) user_id: string;
  @ApiProperty({ type: String }) user_name: string;
  @ApiProperty({ type: Number, enum: [-1, 0, 1, 2] }) level: number;
}

export class EnvelopeInfoDto {
  @ApiProperty({ type: Number, example: 0 }) exec_code: number;
  @ApiProperty({ type: String }) help_text: string;
}

class EnvelopeBaseDto {
  @ApiProperty({ type: String, enum: ['none'] }) error: 'none';
  @ApiProperty({ type: EnvelopeInfoDto }) info: EnvelopeInfoDto;
}

export class SessionResultDto {
  @ApiProperty({ type: String, enum: ['API'] }) data_to: 'API';
  @ApiProperty({ type: String, example: 'Valid Session' }) data_info: string;
  @ApiProperty({ type: SessionDataDto }) data: SessionDataDto;
}

export class ValidSessionEnvelopeDto extends EnvelopeBaseDto {
  @ApiProperty({ type: SessionResultDto }) result: SessionResultDto;
}

export class EmptyResultDto {
  @ApiProperty({ type: String, enum: ['API'] }) data_to: 'API';
  @ApiProperty({ type: String, example: 'Valid Session' }) data_info: string;
  @ApiProperty({ type: Object, nullable: true, example: null }) data: null;
  @ApiProperty({ type: String, nullable: true, example: null }) data_type: null;
}

export class IsValidSessionEnvelopeDto extends EnvelopeBaseDto {
  @ApiProperty({ type: EmptyResultDto }) result: EmptyResultDto;
}

export class LinkedIdentityDto {
  @ApiProperty({ type: String, enum: ['discord', 'google'] }) provider: string;
  @ApiProperty({ type: String }) provider_user_id: string;
  @ApiProperty({ type: String, format: 'date-time' }) linked_at: string;
}

export class UserDataDto {
  @ApiProperty({ type: String }) user_id: string;
  @ApiProperty({ type: String }) username: string;
  @ApiProperty({ type: String }) email: string;
  @ApiProperty({ type: Number, enum: [-1, 0, 1, 2] }) level: number;
  @ApiProperty({ type: [LinkedIdentityDto] }) providers: LinkedIdentityDto[];
  @ApiProperty({ type: String, format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_login_at: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The web client's settings ({} until saved)",
  })
  settings: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Per-module data by module name' })
  mod_data: Record<string, unknown>;
}

export class UserDataResultDto {
  @ApiProperty({ type: String, enum: ['API'] }) data_to: 'API';
  @ApiProperty({ type: String, example: 'User data retrieved' }) data_info: string;
  @ApiProperty({ type: UserDataDto }) data: UserDataDto;
  @ApiProperty({ type: String, enum: ['json'] }) data_type: 'json';
}

export class UserDataEnvelopeDto extends EnvelopeBaseDto {
  @ApiProperty({ type: UserDataResultDto }) result: UserDataResultDto;
}

export class LoggedOutDto {
  @ApiProperty({ type: String, enum: ['logged_out'] }) status: 'logged_out';
}

export class TokenBundleDto {
  @ApiProperty({ type: String, description: 'HS256 access token (15 min)' }) access_token: string;
  @ApiProperty({ type: String, description: 'Single-use refresh token (7 days)' }) refresh_token: string;
  @ApiProperty({ type: Number, example: 900 }) expires_in: number;
  @ApiProperty({ type: String, enum: ['Bearer'] }) token_type: 'Bearer';
}

export class OAuthUrlDto {
  @ApiProperty({ type: String, format: 'uri' }) auth_url: string;
  @ApiProperty({ type: String, description: 'Single use, valid 10 minutes' }) state: string;
}

export class MagicLinkRequestedDto {
  @ApiProperty({ type: String, enum: ['accepted'] }) status: 'accepted';
  @ApiProperty({ type: String }) message: string;
}

export class MagicLinkRequestDto {
  @ApiProperty({ type: String, format: 'email' }) email: string;
}

export class RefreshRequestDto {
  @ApiProperty({ type: String }) refresh_token: string;
}

export class ValidateSessionRequestDto {
  @ApiPropertyOptional({ type: String, description: 'Access token (or `token`, `Jwt_claim`, or a Bearer header)' })
  session_token?: string;
  @ApiPropertyOptional({ type: String }) token?: string;
  @ApiPropertyOptional({ type: String }) Jwt_claim?: string;
}
