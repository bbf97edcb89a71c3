import { randomBytes } from 'node:crypto';
import type { OllamaChatRecord, OllamaToolCall } from '../ollama/ollama.types.js';

/** OpenAI's chat-completion response and stream chunks, built from Ollama's native records. */

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: OpenAiToolCall[] };
    logprobs: null;
    finish_reason: FinishReason;
  }>;
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: 0;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: Array<{
        index: number;
        id: string;
        type: 'function';
        function: { name: string; arguments: string };
      }>;
    };
    logprobs: null;
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage | null;
}

export const SYSTEM_FINGERPRINT = 'fp_toolbox_ollama';

/** Random bytes drawn from the OS 4 KiB at a time (one system call per ~340 ids instead of one each). */
const entropy = { pool: Buffer.alloc(0), offset: 0 };

function randomHex(bytes: number): string {
  if (entropy.offset + bytes > entropy.pool.length) {
    entropy.pool = randomBytes(4096);
    entropy.offset = 0;
  }
  entropy.offset += bytes;
  return entropy.pool.toString('hex', entropy.offset - bytes, entropy.offset);
}

export function completionId(): string {
  return `chatcmpl-${randomHex(12)}`;
}

export function toolCallId(): string {
  return `call_${randomHex(12)}`;
}

/** Exact counts from the runtime (`prompt_eval_count` may be absent when the whole prompt was cached). */
export function usageOf(record: Pick<OllamaChatRecord, 'prompt_eval_count' | 'eval_count'>): Usage {
  const prompt = record.prompt_eval_count ?? 0;
  const completion = record.eval_count ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

export function finishReasonOf(doneReason: string | undefined, sawToolCalls: boolean): FinishReason {
  if (sawToolCalls) return 'tool_calls';
  return doneReason === 'length' ? 'length' : 'stop';
}

/** Native arguments are an object; OpenAI's are a JSON string. */
export function toOpenAiToolCall(call: OllamaToolCall): OpenAiToolCall {
  const args = call.function.arguments;
  return {
    id: call.id ?? toolCallId(),
    type: 'function',
    function: { name: call.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
  };
}

export function toChatCompletion(record: OllamaChatRecord, model: string, created: number): ChatCompletion {
  const toolCalls = (record.message?.tool_calls ?? []).map(toOpenAiToolCall);
  const content = record.message?.content ?? '';
  return {
    id: completionId(),
    object: 'chat.completion',
    created,
    model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls.length > 0 && content === '' ? null : content,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(record.done_reason, toolCalls.length > 0),
      },
    ],
    usage: usageOf(record),
  };
}

/**
 * Turns the native NDJSON records of one generation into OpenAI chunks: the first carries the role, each
 * record's text a content delta, each native tool call (Ollama sends them whole) a tool-call delta with
 * its index, the `done` record the finish reason, and with `include_usage` one more chunk with no choices
 * and the exact usage. Every chunk has `usage: null` until then, as OpenAI's do.
 */
export class ChunkTranslator {
  readonly id = completionId();
  private sentRole = false;
  private toolCallCount = 0;
  usage: Usage | null = null;
  /** Tokens generated so far (one native record is about one token), for billing a stream cut short. */
  generatedRecords = 0;

  constructor(
    private readonly model: string,
    private readonly created: number,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(
    delta: ChatCompletionChunk['choices'][0]['delta'],
    finishReason: FinishReason | null,
  ): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    };
  }

  /** The chunks one native record becomes (none for an empty keep-alive record). */
  translate(record: OllamaChatRecord): ChatCompletionChunk[] {
    const chunks: ChatCompletionChunk[] = [];
    const roleOnce = (): { role?: 'assistant' } => {
      if (this.sentRole) return {};
      this.sentRole = true;
      return { role: 'assistant' };
    };
    const content = record.message?.content ?? '';
    if (content) {
      this.generatedRecords += 1;
      chunks.push(this.chunk({ ...roleOnce(), content }, null));
    }
    for (const call of record.message?.tool_calls ?? []) {
      const openAi = toOpenAiToolCall(call);
      chunks.push(
        this.chunk(
          {
            ...roleOnce(),
            tool_calls: [{ index: this.toolCallCount++, ...openAi }],
          },
          null,
        ),
      );
    }
    if (record.done) {
      if (!this.sentRole) chunks.push(this.chunk({ ...roleOnce(), content: '' }, null));
      chunks.push(this.chunk({}, finishReasonOf(record.done_reason, this.toolCallCount > 0)));
      this.usage = usageOf(record);
      if (this.includeUsage) {
        chunks.push({
          id: this.id,
          object: 'chat.completion.chunk',
          created: this.created,
          model: this.model,
          system_fingerprint: SYSTEM_FINGERPRINT,
          choices: [],
          usage: this.usage,
        });
      }
    }
    return chunks;
  }
}
