import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class CreateLiveSessionDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { model: 'llama3.2', system_prompt: 'Be brief.', temperature: 0.7, max_tokens: 1024, history_length: 20 },
  })
  llm_config: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { model: 'kokoro', voice_id: 'alloy', speed: 1 },
  })
  voice_config?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { enabled: true, words: ['hey toolbox'], mode: 'pre' },
  })
  wake_word_config?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { output_format: 'mp3', allow_interrupt: true },
  })
  audio_config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: Number, minimum: 5, maximum: 20, default: 15 })
  session_ttl_minutes?: number;
}

export class LiveSessionDto {
  @ApiProperty({ type: String, example: 'live-0123456789abcdef0123456789abcdef' })
  token: string;

  @ApiProperty({ type: String, example: 'ws://127.0.0.1:4000/v1/audio/live/ws/live-…' })
  websocket_url: string;

  @ApiProperty({ type: String, format: 'date-time' })
  expires_at: string;
}

export class LiveSessionInfoDto {
  @ApiProperty({ type: String })
  token: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time' })
  expires_at: string;

  @ApiProperty({ type: Number, description: 'Messages in the conversation so far' })
  history_length: number;

  @ApiProperty({ type: 'object', additionalProperties: true })
  config: Record<string, unknown>;
}

export class ClosedLiveSessionDto {
  @ApiProperty({ type: String, enum: ['closed'] })
  status: string;

  @ApiProperty({ type: String })
  token: string;
}
