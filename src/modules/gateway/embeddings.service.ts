import { Injectable } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import { MeteringService } from './accounts/metering.service.js';
import { ChatService } from './chat/chat.service.js';
import type { GatewayCaller } from './gateway-caller.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import type { RoutingDecision } from './model-routing.js';

export interface EmbeddingsResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface EmbeddingsRequest {
  model: string;
  input: string | string[];
  encodingFormat: 'float' | 'base64';
}

function fail(param: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field: param, message }]);
}

/** Checks an `/v1/embeddings` body (token-array inputs are not supported: Ollama embeds text). */
export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    fail('body', 'The request body must be a JSON object');
  const value = body as Record<string, unknown>;
  if (typeof value.model !== 'string' || !value.model.trim()) fail('model', "'model' is required");
  const input = value.input;
  const isText = typeof input === 'string' && input.length > 0;
  const isTexts =
    Array.isArray(input) &&
    input.length > 0 &&
    input.length <= 2048 &&
    input.every((item) => typeof item === 'string' && item.length > 0);
  if (!isText && !isTexts) {
    fail(
      'input',
      "'input' must be a non-empty string or an array of 1 to 2048 non-empty strings (token arrays are not supported)",
    );
  }
  const format = value.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') fail('encoding_format', "'encoding_format' must be float or base64");
  if (value.dimensions !== undefined && value.dimensions !== null) {
    fail('dimensions', "'dimensions' is not supported: the model runtime returns the model's own size");
  }
  return { model: value.model.trim(), input: input as string | string[], encodingFormat: format };
}

/** OpenAI's base64 encoding: the float32 little-endian bytes of the vector. */
export function float32Base64(vector: number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer.toString('base64');
}

@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly gateway: GatewaySettingsService,
    private readonly chat: ChatService,
    private readonly metering: MeteringService,
  ) {}

  async prepare(body: unknown): Promise<{ request: EmbeddingsRequest; routing: RoutingDecision }> {
    const request = parseEmbeddingsRequest(body);
    return { request, routing: await this.chat.route(request.model, 'embedding') };
  }

  /** Metered embeddings (prompt tokens only). */
  async create(
    caller: GatewayCaller,
    body: unknown,
  ): Promise<{ result: EmbeddingsResponse; routing: RoutingDecision }> {
    const { request, routing } = await this.prepare(body);
    const texts = typeof request.input === 'string' ? [request.input] : request.input;
    const ticket = await this.metering.begin(caller, {
      endpoint: 'embeddings',
      model: routing.model,
      promptTokensEstimate: Math.ceil(texts.reduce((sum, text) => sum + text.length, 0) / 4),
      maxCompletionTokens: 0,
    });
    try {
      const result = await this.embed(request, routing);
      await this.metering.finish(ticket, {
        promptTokens: result.usage.prompt_tokens,
        completionTokens: 0,
        status: 200,
      });
      return { result, routing };
    } catch (error) {
      await this.metering.finish(ticket, {
        promptTokens: 0,
        completionTokens: 0,
        status: (error as { status?: number }).status ?? 500,
      });
      throw error;
    }
  }

  async embed(request: EmbeddingsRequest, routing: RoutingDecision): Promise<EmbeddingsResponse> {
    const response = await this.gateway.client.embed(routing.model, request.input);
    const tokens = response.prompt_eval_count ?? 0;
    return {
      object: 'list',
      data: response.embeddings.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: request.encodingFormat === 'base64' ? float32Base64(vector) : vector,
      })),
      model: routing.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }
}
