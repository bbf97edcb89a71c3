import { PlatformError } from '../../../common/errors.js';
import type { ModelNeed } from '../model-routing.js';
import type { OllamaChatRequest, OllamaMessage, OllamaOptions, OllamaToolCall } from '../ollama/ollama.types.js';

/**
 * The OpenAI chat-completion request as the gateway understands it, parsed and checked at the edge
 * (one clear 400 naming the parameter, as OpenAI answers), then mapped onto Ollama's native `/api/chat`.
 */

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | ContentPart[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  tools?: unknown[];
  toolChoice?: unknown;
  format?: 'json' | Record<string, unknown>;
  options: OllamaOptions;
}

type Json = Record<string, unknown>;

function fail(param: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field: param, message }]);
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function optionalNumber(body: Json, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    fail(name, `'${name}' must be a number from ${min} to ${max}`);
  }
  return value;
}

function optionalInteger(body: Json, name: string, min: number): number | undefined {
  const value = optionalNumber(body, name, min, Number.MAX_SAFE_INTEGER);
  if (value !== undefined && !Number.isInteger(value)) fail(name, `'${name}' must be a whole number`);
  return value;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const AUDIO_FORMATS = new Set(['wav', 'mp3']);

function parseContent(content: unknown, path: string): string | ContentPart[] | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) fail(path, `'${path}' must be a string or an array of content parts`);
  return content.map((part, index): ContentPart => {
    const at = `${path}[${index}]`;
    if (!isObject(part)) fail(at, `'${at}' must be an object`);
    switch (part.type) {
      case 'text':
        if (typeof part.text !== 'string') fail(`${at}.text`, `'${at}.text' must be a string`);
        return { type: 'text', text: part.text };
      case 'image_url': {
        const image = part.image_url;
        if (!isObject(image) || typeof image.url !== 'string' || !image.url) {
          fail(`${at}.image_url.url`, `'${at}.image_url.url' must be a data: or http(s) URL`);
        }
        assertImageDataUrl(image.url, `${at}.image_url.url`);
        return { type: 'image_url', image_url: { url: image.url, detail: image.detail as string | undefined } };
      }
      case 'input_audio': {
        const audio = part.input_audio;
        if (!isObject(audio) || typeof audio.data !== 'string' || !audio.data) {
          fail(`${at}.input_audio.data`, `'${at}.input_audio.data' must be base64 audio`);
        }
        if (typeof audio.format !== 'string' || !AUDIO_FORMATS.has(audio.format)) {
          fail(`${at}.input_audio.format`, `'${at}.input_audio.format' must be one of wav, mp3`);
        }
        return { type: 'input_audio', input_audio: { data: audio.data, format: audio.format } };
      }
      default:
        return fail(`${at}.type`, `'${at}.type' must be one of text, image_url, input_audio`);
    }
  });
}

function parseToolCalls(value: unknown, path: string): ChatToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) fail(path, `'${path}' must be an array`);
  return value.map((call, index) => {
    const at = `${path}[${index}]`;
    if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') {
      fail(at, `'${at}' must be {id, type: "function", function: {name, arguments}}`);
    }
    const args = call.function.arguments ?? '{}';
    if (typeof args !== 'string') fail(`${at}.function.arguments`, `'${at}.function.arguments' must be a JSON string`);
    return { id: String(call.id ?? ''), type: 'function', function: { name: call.function.name, arguments: args } };
  });
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) fail('messages', "'messages' must be a non-empty array");
  return value.map((message, index) => {
    const at = `messages[${index}]`;
    if (!isObject(message)) fail(at, `'${at}' must be an object`);
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      fail(`${at}.role`, `'${at}.role' must be one of system, developer, user, assistant, tool`);
    }
    const parsed: ChatMessage = {
      role: message.role as ChatMessage['role'],
      content: parseContent(message.content, `${at}.content`),
    };
    const toolCalls = parseToolCalls(message.tool_calls, `${at}.tool_calls`);
    if (toolCalls) parsed.tool_calls = toolCalls;
    if (typeof message.tool_call_id === 'string') parsed.tool_call_id = message.tool_call_id;
    if (typeof message.name === 'string') parsed.name = message.name;
    if (parsed.content === null && parsed.role !== 'assistant') fail(`${at}.content`, `'${at}.content' is required`);
    return parsed;
  });
}

function parseStop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length <= 4 && value.every((item) => typeof item === 'string')) return value;
  return fail('stop', "'stop' must be a string or an array of up to 4 strings");
}

function parseResponseFormat(value: unknown): ChatRequest['format'] {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) fail('response_format', "'response_format' must be an object");
  switch (value.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return 'json';
    case 'json_schema': {
      const schema = isObject(value.json_schema) ? value.json_schema.schema : undefined;
      if (!isObject(schema))
        fail('response_format.json_schema.schema', "'response_format.json_schema.schema' is required");
      return schema;
    }
    default:
      return fail('response_format.type', "'response_format.type' must be one of text, json_object, json_schema");
  }
}

function parseTools(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) fail('tools', "'tools' must be an array");
  value.forEach((tool, index) => {
    if (
      !isObject(tool) ||
      tool.type !== 'function' ||
      !isObject(tool.function) ||
      typeof tool.function.name !== 'string'
    ) {
      fail(
        `tools[${index}]`,
        `'tools[${index}]' must be {type: "function", function: {name, description?, parameters?}}`,
      );
    }
  });
  return value.length > 0 ? value : undefined;
}

/** Checks a `/v1/chat/completions` body; everything it does not know of OpenAI's parameters is ignored. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) fail('body', 'The request body must be a JSON object');
  if (typeof body.model !== 'string' || !body.model.trim()) fail('model', "'model' is required");
  const n = optionalInteger(body, 'n', 1);
  if (n !== undefined && n !== 1) fail('n', "'n' must be 1: the model runtime generates one choice per request");
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    fail('stream', "'stream' must be a boolean");
  }
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isObject(streamOptions)) {
    fail('stream_options', "'stream_options' must be an object");
  }
  const maxTokens = optionalInteger(body, 'max_completion_tokens', 1) ?? optionalInteger(body, 'max_tokens', 1);
  const options: OllamaOptions = {};
  const temperature = optionalNumber(body, 'temperature', 0, 2);
  const topP = optionalNumber(body, 'top_p', 0, 1);
  const seed = optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER);
  const presence = optionalNumber(body, 'presence_penalty', -2, 2);
  const frequency = optionalNumber(body, 'frequency_penalty', -2, 2);
  const stop = parseStop(body.stop);
  if (temperature !== undefined) options.temperature = temperature;
  if (topP !== undefined) options.top_p = topP;
  if (maxTokens !== undefined) options.num_predict = maxTokens;
  if (seed !== undefined) options.seed = seed;
  if (presence !== undefined) options.presence_penalty = presence;
  if (frequency !== undefined) options.frequency_penalty = frequency;
  if (stop) options.stop = stop;
  const toolChoice = body.tool_choice;
  if (
    toolChoice !== undefined &&
    toolChoice !== null &&
    !['none', 'auto', 'required'].includes(toolChoice as string) &&
    !(isObject(toolChoice) && isObject(toolChoice.function) && typeof toolChoice.function.name === 'string')
  ) {
    fail('tool_choice', '\'tool_choice\' must be none, auto, required or {type: "function", function: {name}}');
  }
  return {
    model: body.model.trim(),
    messages: parseMessages(body.messages),
    stream: body.stream === true,
    includeUsage: body.stream === true && isObject(streamOptions) && streamOptions.include_usage === true,
    tools: parseTools(body.tools),
    toolChoice: toolChoice ?? undefined,
    format: parseResponseFormat(body.response_format),
    options,
  };
}

/** What the request's content needs: any image part a vision model, any audio part an omni/audio model. */
export function chatNeed(request: ChatRequest): ModelNeed {
  let need: ModelNeed = 'chat';
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === 'input_audio') return 'audio';
      if (part.type === 'image_url') need = 'vision';
    }
  }
  return need;
}

/** Turns an `image_url` into base64 bytes (data URLs decoded here, http(s) URLs fetched by the caller's fetcher). */
export type ImageResolver = (url: string) => Promise<string>;

const DATA_URL = /^data:([^;,]*)(;[^,]*)?,(.*)$/s;

/**
 * A data URL in an `image_url` part must carry an image: the runtime takes every entry of `images` as
 * bytes to look at (an omni model would even hear a WAV there), so audio or text sent as an image would
 * be read as something it is not. Audio goes in an `input_audio` part. A data URL without a media type
 * is text/plain (RFC 2397).
 */
function assertImageDataUrl(url: string, param: string): void {
  if (!/^data:/i.test(url)) return;
  const mediaType = (DATA_URL.exec(url)?.[1] ?? '').trim().toLowerCase() || 'text/plain';
  if (!mediaType.startsWith('image/')) {
    const hint = mediaType.startsWith('audio/') ? ' (send audio as an input_audio part)' : '';
    fail(param, `'${param}' is a data URL of ${mediaType}; an image_url part takes image/* data${hint}`);
  }
}

export function decodeDataUrl(url: string, param = 'image_url.url'): string {
  const match = DATA_URL.exec(url);
  if (!match) fail(param, `'${param}' is not a valid data URL`);
  if (!/;base64$/i.test(match[2] ?? '')) return Buffer.from(decodeURIComponent(match[3]), 'utf8').toString('base64');
  const payload = match[3].replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload) || payload.length === 0) fail(param, `'${param}' has invalid base64`);
  return payload;
}

function toolArguments(raw: string, at: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw || '{}');
    return isObject(parsed) ? parsed : { value: parsed };
  } catch {
    return fail(at, `'${at}' must be a JSON string`);
  }
}

/**
 * The native request: content parts become `content` text plus `images` (base64; WAV audio for omni
 * models travels there too, Ollama tells it by its RIFF header), tool-call arguments become objects,
 * the sampling parameters `options`, `response_format` the `format`. `developer` is a system message.
 */
export async function toOllamaChat(
  request: ChatRequest,
  model: string,
  resolveImage: ImageResolver,
): Promise<OllamaChatRequest> {
  const toolNames = new Map<string, string>();
  const messages: OllamaMessage[] = [];
  for (const [index, message] of request.messages.entries()) {
    const role = message.role === 'developer' ? 'system' : message.role;
    const native: OllamaMessage = { role, content: '' };
    if (typeof message.content === 'string') native.content = message.content;
    else if (message.content) {
      const texts: string[] = [];
      const images: string[] = [];
      for (const [partIndex, part] of message.content.entries()) {
        if (part.type === 'text') texts.push(part.text);
        else if (part.type === 'image_url') images.push(await resolveImage(part.image_url.url));
        else {
          if (part.input_audio.format !== 'wav') {
            fail(
              `messages[${index}].content[${partIndex}].input_audio.format`,
              'The model runtime takes WAV audio only (16 kHz mono); convert mp3 before sending it',
            );
          }
          images.push(
            decodeDataUrl(
              `data:audio/wav;base64,${part.input_audio.data}`,
              `messages[${index}].content[${partIndex}].input_audio.data`,
            ),
          );
        }
      }
      native.content = texts.join('\n');
      if (images.length > 0) native.images = images;
    }
    if (message.tool_calls) {
      native.tool_calls = message.tool_calls.map((call, callIndex): OllamaToolCall => {
        toolNames.set(call.id, call.function.name);
        return {
          function: {
            name: call.function.name,
            arguments: toolArguments(
              call.function.arguments,
              `messages[${index}].tool_calls[${callIndex}].function.arguments`,
            ),
          },
        };
      });
    }
    if (role === 'tool') {
      const name = message.name ?? (message.tool_call_id ? toolNames.get(message.tool_call_id) : undefined);
      if (name) native.tool_name = name;
    }
    messages.push(native);
  }
  const native: OllamaChatRequest = { model, messages, stream: request.stream };
  // tool_choice "none" means: answer in text, so the tools are not offered at all.
  if (request.tools && request.toolChoice !== 'none') native.tools = request.tools;
  if (request.format) native.format = request.format;
  if (Object.keys(request.options).length > 0) native.options = request.options;
  return native;
}
