import { Inject, Injectable } from '@nestjs/common';
import { PLATFORM_CONFIG } from '../../../config/config.module.js';
import type { PlatformConfig } from '../../../config/config.js';
import { GatewaySettingsService } from '../gateway-settings.service.js';
import { resolveImageUrl } from '../image-fetcher.js';
import { routeModel, type ModelNeed, type ModelType, type RoutingDecision } from '../model-routing.js';
import type { OllamaChatRecord } from '../ollama/ollama.types.js';
import { chatNeed, parseChatRequest, toOllamaChat, type ChatRequest } from './chat-request.js';
import {
  ChunkTranslator,
  toChatCompletion,
  type ChatCompletion,
  type ChatCompletionChunk,
  type Usage,
} from './chat-response.js';

/** A started stream: its chunks as they come, and what it generated (for usage) once it ends or is cut. */
export interface ChatStream {
  model: string;
  routing: RoutingDecision;
  chunks: AsyncGenerator<ChatCompletionChunk>;
  translator: ChunkTranslator;
}

export interface ChatResult {
  completion: ChatCompletion;
  routing: RoutingDecision;
  usage: Usage;
}

/** `/v1/chat/completions` over Ollama's `/api/chat`: routing by content, mapping both ways, exact usage. */
@Injectable()
export class ChatService {
  constructor(
    private readonly gateway: GatewaySettingsService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  /** Parses the body and picks the model (the requested one, or the configured fallback for its content). */
  async prepare(body: unknown): Promise<{ request: ChatRequest; routing: RoutingDecision }> {
    const request = parseChatRequest(body);
    return { request, routing: await this.route(request.model, chatNeed(request)) };
  }

  async route(requested: string, need: ModelNeed): Promise<RoutingDecision> {
    const fallbacks = this.gateway.settings.fallback_models;
    const types = new Map<string, ModelType | undefined>();
    for (const name of [requested, fallbacks[need]]) if (name) types.set(name, await this.gateway.catalog.typeOf(name));
    return routeModel({ requested, need, typeOf: (name) => types.get(name), fallbacks });
  }

  async complete(request: ChatRequest, routing: RoutingDecision, signal?: AbortSignal): Promise<ChatResult> {
    const native = await this.native(request, routing.model);
    const record = await this.gateway.client.chat(native, signal);
    const completion = toChatCompletion(record, routing.model, Math.floor(Date.now() / 1000));
    return { completion, routing, usage: completion.usage };
  }

  /**
   * Starts the upstream generation and waits for its first record, so a failure to start (unknown model,
   * runtime down) is still an ordinary error response; later failures are the stream's to report.
   */
  async stream(request: ChatRequest, routing: RoutingDecision, signal: AbortSignal): Promise<ChatStream> {
    const native = await this.native(request, routing.model);
    const records = this.gateway.client.chatStream(native, signal);
    const first = await records.next();
    const translator = new ChunkTranslator(routing.model, Math.floor(Date.now() / 1000), request.includeUsage);
    async function* chunks(): AsyncGenerator<ChatCompletionChunk> {
      let next: IteratorResult<OllamaChatRecord> = first;
      while (!next.done) {
        const record = next.value;
        if (record.error) throw new Error(record.error);
        yield* translator.translate(record);
        if (record.done) return;
        next = await records.next();
      }
    }
    return { model: routing.model, routing, chunks: chunks(), translator };
  }

  private native(request: ChatRequest, model: string) {
    const limits = { maxBytes: this.config.gateway.imageMaxBytes, timeoutMs: this.config.gateway.imageFetchTimeoutMs };
    return toOllamaChat(request, model, (url) => resolveImageUrl(url, limits));
  }
}
