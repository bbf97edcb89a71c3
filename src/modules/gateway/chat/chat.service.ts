import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG } from '../../../config/config.module.js';
import type { GatewayConfig } from '../../../config/config.js';
import { MeteringService, type MeterTicket } from '../accounts/metering.service.js';
import type { GatewayCaller } from '../gateway-caller.js';
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

/** About four characters a token: only sizes the hold on a PAYG balance, never the bill. */
export function estimatePromptTokens(request: ChatRequest): number {
  let characters = 0;
  for (const message of request.messages) {
    if (typeof message.content === 'string') characters += message.content.length;
    else for (const part of message.content ?? []) if (part.type === 'text') characters += part.text.length;
  }
  return Math.ceil(characters / 4);
}

function statusOf(error: unknown): number {
  return (error as { status?: number }).status ?? 500;
}

/** `/v1/chat/completions` over Ollama's `/api/chat`: routing by content, mapping both ways, exact usage. */
@Injectable()
export class ChatService {
  constructor(
    private readonly gateway: GatewaySettingsService,
    private readonly metering: MeteringService,
    @Inject(GATEWAY_CONFIG) private readonly gatewayConfig: GatewayConfig,
  ) {}

  /**
   * Holds the call's likely cost (PAYG), or 402 when the balance does not cover it; the runtime then generates
   * no more than the hold pays for, so a call never spends more than it held (but for a prompt the estimate missed).
   */
  async meter(caller: GatewayCaller, request: ChatRequest, routing: RoutingDecision): Promise<MeterTicket> {
    const ticket = await this.metering.begin(caller, {
      endpoint: 'chat.completions',
      model: routing.model,
      promptTokensEstimate: estimatePromptTokens(request),
      maxCompletionTokens: request.options.num_predict,
    });
    const limit = ticket.completionLimit;
    if (limit !== null && (request.options.num_predict === undefined || request.options.num_predict > limit)) {
      request.options.num_predict = limit;
    }
    return ticket;
  }

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

  /** One metered, non-streamed completion. */
  async complete(caller: GatewayCaller, body: unknown, signal?: AbortSignal): Promise<ChatResult> {
    const { request, routing } = await this.prepare(body);
    const ticket = await this.meter(caller, request, routing);
    try {
      const native = await this.native(request, routing.model);
      const record = await this.gateway.client.chat(native, signal);
      const completion = toChatCompletion(record, routing.model, Math.floor(Date.now() / 1000));
      await this.metering.finish(ticket, {
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
        status: 200,
      });
      return { completion, routing, usage: completion.usage };
    } catch (error) {
      await this.metering.finish(ticket, { promptTokens: 0, completionTokens: 0, status: statusOf(error) });
      throw error;
    }
  }

  /** One metered stream: settled from the final counts, or from what was generated when it ends early. */
  async startStream(caller: GatewayCaller, body: unknown, signal: AbortSignal): Promise<ChatStream> {
    const { request, routing } = await this.prepare(body);
    const ticket = await this.meter(caller, request, routing);
    let stream: ChatStream;
    try {
      stream = await this.stream(request, routing, signal);
    } catch (error) {
      await this.metering.finish(ticket, { promptTokens: 0, completionTokens: 0, status: statusOf(error) });
      throw error;
    }
    const metering = this.metering;
    const inner = stream.chunks;
    const { translator } = stream;
    async function* metered(): AsyncGenerator<ChatCompletionChunk> {
      let status = 499;
      try {
        yield* inner;
        status = 200;
      } catch (error) {
        // The client leaving aborts the upstream read: that is a cut stream (499), not a runtime failure.
        status = signal.aborted ? 499 : 502;
        throw error;
      } finally {
        // A stream cut short is billed for what was generated: one native record is one token.
        const usage = translator.usage;
        await metering.finish(ticket, {
          promptTokens: usage?.prompt_tokens ?? estimatePromptTokens(request),
          completionTokens: usage?.completion_tokens ?? translator.generatedRecords,
          status: usage ? 200 : status,
        });
      }
    }
    return { ...stream, chunks: metered() };
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
    const limits = {
      maxBytes: this.gatewayConfig.imageMaxBytes,
      timeoutMs: this.gatewayConfig.imageFetchTimeoutMs,
      allowPrivate: this.gatewayConfig.imageAllowPrivate,
    };
    return toOllamaChat(request, model, (url) => resolveImageUrl(url, limits));
  }
}
