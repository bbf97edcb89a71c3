import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/**
 * OpenAPI shapes of the OpenAI-compatible API. Bodies are checked by the parsers beside the services
 * (parseChatRequest, parseEmbeddingsRequest), which accept OpenAI's whole parameter set and answer a bad
 * one with OpenAI's 400; these classes document the wire, they do not validate it.
 */

export class OpenAiErrorDetailDto {
  @ApiProperty({ type: String, example: "The model 'llama9' does not exist" })
  message: string;

  @ApiProperty({ type: String, example: 'invalid_request_error' })
  type: string;

  @ApiProperty({ type: String, nullable: true, example: 'model' })
  param: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'not_found' })
  code: string | null;
}

export class OpenAiErrorDto {
  @ApiProperty({ type: OpenAiErrorDetailDto })
  error: OpenAiErrorDetailDto;
}

export class ChatMessageDto {
  @ApiProperty({ enum: ['system', 'developer', 'user', 'assistant', 'tool'] })
  role: string;

  @ApiProperty({
    description:
      'A string, or content parts: {type:"text",text}, {type:"image_url",image_url:{url}}, {type:"input_audio",input_audio:{data,format}}',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    nullable: true,
  })
  content: unknown;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  tool_calls?: unknown[];

  @ApiPropertyOptional({ type: String })
  tool_call_id?: string;
}

export class ChatCompletionRequestDto {
  @ApiProperty({ type: String, example: 'llama3.2' })
  model: string;

  @ApiProperty({ type: [ChatMessageDto] })
  messages: ChatMessageDto[];

  @ApiPropertyOptional({ type: Boolean, default: false })
  stream?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { include_usage: true } })
  stream_options?: { include_usage?: boolean };

  @ApiPropertyOptional({ type: Number, minimum: 0, maximum: 2 })
  temperature?: number;

  @ApiPropertyOptional({ type: Number, minimum: 0, maximum: 1 })
  top_p?: number;

  @ApiPropertyOptional({ type: Number, minimum: 1 })
  max_tokens?: number;

  @ApiPropertyOptional({ type: Number, minimum: 1 })
  max_completion_tokens?: number;

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  stop?: string | string[];

  @ApiPropertyOptional({ type: Number })
  seed?: number;

  @ApiPropertyOptional({ type: Number, enum: [1], description: 'Only 1: the runtime generates one choice' })
  n?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { type: 'json_object' } })
  response_format?: unknown;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  tools?: unknown[];

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'object' }] })
  tool_choice?: unknown;
}

export class UsageDto {
  @ApiProperty({ type: Number, example: 12 })
  prompt_tokens: number;

  @ApiProperty({ type: Number, example: 30 })
  completion_tokens: number;

  @ApiProperty({ type: Number, example: 42 })
  total_tokens: number;
}

export class ChatChoiceDto {
  @ApiProperty({ type: Number, example: 0 })
  index: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { role: 'assistant', content: 'Hello!', refusal: null },
  })
  message: unknown;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  logprobs: null;

  @ApiProperty({ enum: ['stop', 'length', 'tool_calls', 'content_filter'] })
  finish_reason: string;
}

export class ChatCompletionDto {
  @ApiProperty({ type: String, example: 'chatcmpl-0123456789abcdef01234567' })
  id: string;

  @ApiProperty({ type: String, enum: ['chat.completion'] })
  object: string;

  @ApiProperty({ type: Number, example: 1767225600 })
  created: number;

  @ApiProperty({ type: String, example: 'llama3.2' })
  model: string;

  @ApiProperty({ type: String, example: 'fp_toolbox_ollama' })
  system_fingerprint: string;

  @ApiProperty({ type: [ChatChoiceDto] })
  choices: ChatChoiceDto[];

  @ApiProperty({ type: UsageDto })
  usage: UsageDto;
}

export class EmbeddingsRequestDto {
  @ApiProperty({ type: String, example: 'nomic-embed-text' })
  model: string;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  input: string | string[];

  @ApiPropertyOptional({ enum: ['float', 'base64'], default: 'float' })
  encoding_format?: string;
}

export class EmbeddingDto {
  @ApiProperty({ type: String, enum: ['embedding'] })
  object: string;

  @ApiProperty({ type: Number })
  index: number;

  @ApiProperty({
    oneOf: [
      { type: 'array', items: { type: 'number' } },
      { type: 'string', description: 'base64 float32 LE' },
    ],
  })
  embedding: number[] | string;
}

export class EmbeddingsUsageDto {
  @ApiProperty({ type: Number })
  prompt_tokens: number;

  @ApiProperty({ type: Number })
  total_tokens: number;
}

export class EmbeddingsDto {
  @ApiProperty({ type: String, enum: ['list'] })
  object: string;

  @ApiProperty({ type: [EmbeddingDto] })
  data: EmbeddingDto[];

  @ApiProperty({ type: String })
  model: string;

  @ApiProperty({ type: EmbeddingsUsageDto })
  usage: EmbeddingsUsageDto;
}

export class ModelDto {
  @ApiProperty({ type: String, example: 'llama3.2:latest' })
  id: string;

  @ApiProperty({ type: String, enum: ['model'] })
  object: string;

  @ApiProperty({ type: Number, example: 1767225600 })
  created: number;

  @ApiProperty({ type: String, example: 'library' })
  owned_by: string;

  @ApiProperty({ enum: ['text', 'vision', 'omni', 'embedding', 'tts', 'audio'] })
  type: string;
}

export class ModelListDto {
  @ApiProperty({ type: String, enum: ['list'] })
  object: string;

  @ApiProperty({ type: [ModelDto] })
  data: ModelDto[];
}

export class SpeechRequestDto {
  @ApiProperty({ type: String, example: 'kokoro' })
  model: string;

  @ApiProperty({ type: String, maxLength: 4096 })
  input: string;

  @ApiProperty({ type: String, example: 'alloy' })
  voice: string;

  @ApiPropertyOptional({ enum: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'], default: 'mp3' })
  response_format?: string;

  @ApiPropertyOptional({ type: Number, minimum: 0.25, maximum: 4, default: 1 })
  speed?: number;
}

export class TranscriptionRequestDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'Audio, up to 25 MB' })
  file: unknown;

  @ApiProperty({ type: String, example: 'whisper-1' })
  model: string;

  @ApiPropertyOptional({ type: String, example: 'en' })
  language?: string;

  @ApiPropertyOptional({ type: String })
  prompt?: string;

  @ApiPropertyOptional({ enum: ['json', 'text', 'srt', 'verbose_json', 'vtt'], default: 'json' })
  response_format?: string;

  @ApiPropertyOptional({ type: Number })
  temperature?: number;
}

export class TranscriptionDto {
  @ApiProperty({ type: String, example: 'Hello there.' })
  text: string;
}
