/**
 * Ollama's native API (docs/api.md of ollama/ollama): the shapes the gateway sends and reads. Durations are
 * nanoseconds; streams are NDJSON, one object per line, the last with `done: true` and the counts.
 */

export interface OllamaToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Base64 without the `data:` prefix. Omni models also read WAV audio here (Ollama sniffs the RIFF header). */
  images?: string[];
  tool_calls?: OllamaToolCall[];
  /** The function a `tool` message answers (newer builds). */
  tool_name?: string;
  thinking?: string;
}

export interface OllamaOptions {
  temperature?: number;
  top_p?: number;
  num_predict?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  tools?: unknown[];
  format?: 'json' | Record<string, unknown>;
  options?: OllamaOptions;
  stream: boolean;
  keep_alive?: string | number;
}

/** One NDJSON record of `/api/chat` (the whole answer when `stream: false`). */
export interface OllamaChatRecord {
  model: string;
  created_at: string;
  message?: OllamaMessage;
  done: boolean;
  done_reason?: string;
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
  /** A mid-stream failure after the 200 was sent. */
  error?: string;
}

export interface OllamaEmbedResponse {
  model: string;
  embeddings: number[][];
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
}

export interface OllamaModelDetails {
  format?: string;
  family?: string;
  families?: string[] | null;
  parameter_size?: string;
  quantization_level?: string;
}

export interface OllamaTagModel {
  name: string;
  model?: string;
  modified_at: string;
  size: number;
  digest: string;
  details?: OllamaModelDetails;
}

export interface OllamaRunningModel extends OllamaTagModel {
  expires_at?: string;
  size_vram?: number;
}

export interface OllamaShowResponse {
  details?: OllamaModelDetails;
  model_info?: Record<string, unknown>;
  /** Seen values: completion, vision, audio, tools, embedding, thinking, insert. Older builds omit it. */
  capabilities?: string[];
  modified_at?: string;
}

/** One NDJSON record of `/api/pull`; a failure arrives as `{error}`. */
export interface OllamaPullProgress {
  status?: string;
  digest?: string;
  total?: number;
  completed?: number;
  error?: string;
}
