import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { PlatformError } from '../../../common/errors.js';
import type {
  OllamaChatRecord,
  OllamaChatRequest,
  OllamaEmbedResponse,
  OllamaPullProgress,
  OllamaRunningModel,
  OllamaShowResponse,
  OllamaTagModel,
} from './ollama.types.js';

/** What the client reads of an answer: node:http underneath (a fraction of fetch's cost per call, which the bench shows). */
interface RuntimeResponse {
  status: number;
  ok: boolean;
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};

function wrap(message: IncomingMessage): RuntimeResponse {
  const status = message.statusCode ?? 0;
  const text = () => readText(message);
  return {
    status,
    ok: status >= 200 && status < 300,
    body: message,
    text,
    json: async () => parseRecord(await text()),
  };
}

/**
 * The whole body as UTF-8, from the stream's events (cheaper than its async iterator for a body read at once);
 * fails as the iterator does: with the stream's error, or when it closes before its end.
 */
function readText(message: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.once('end', () => resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8')));
    message.on('error', reject);
    message.once('close', () => {
      if (!message.readableEnded) {
        reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
      }
    });
  });
}

function parseRecord(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PlatformError(
      'BAD_GATEWAY',
      `The model runtime answered with something that is not JSON: ${text.trim().slice(0, 200) || '(empty)'}`,
    );
  }
}

/** Request options of each URL the client calls (the runtime's base and a fixed path), parsed once. */
const targets = new Map<string, { options: RequestOptions; https: boolean }>();

function targetOf(url: string): { options: RequestOptions; https: boolean } {
  let target = targets.get(url);
  if (!target) {
    const parsed = new URL(url);
    // The runtime's fixed paths under one or two base URLs; a bound keeps a changing setting from growing it.
    if (targets.size >= 256) targets.clear();
    target = { options: urlToHttpOptions(parsed), https: parsed.protocol === 'https:' };
    targets.set(url, target);
  }
  return target;
}

function send(url: string, method: string, body: string | undefined, signal?: AbortSignal): Promise<RuntimeResponse> {
  return new Promise((resolve, reject) => {
    const { options, https } = targetOf(url);
    const request = (https ? httpsRequest : httpRequest)(
      {
        ...options,
        method,
        agent: https ? agents.https : agents.http,
        signal,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (message) => resolve(wrap(message)),
    );
    request.on('error', reject);
    request.end(body);
  });
}

export class OllamaClient {
  constructor(readonly baseUrl: string) {}

  async chat(request: OllamaChatRequest, signal?: AbortSignal): Promise<OllamaChatRecord> {
    const response = await this.post('/api/chat', { ...request, stream: false }, signal);
    return (await response.json()) as OllamaChatRecord;
  }

  /** The NDJSON records of a streamed chat; aborting `signal` stops the generation upstream (Ollama drops it). */
  async *chatStream(request: OllamaChatRequest, signal?: AbortSignal): AsyncGenerator<OllamaChatRecord> {
    const response = await this.post('/api/chat', { ...request, stream: true }, signal);
    for await (const line of ndjsonLines(response)) yield parseRecord(line) as OllamaChatRecord;
  }

  async embed(model: string, input: string | string[], signal?: AbortSignal): Promise<OllamaEmbedResponse> {
    const response = await this.post('/api/embed', { model, input }, signal);
    return (await response.json()) as OllamaEmbedResponse;
  }

  async tags(): Promise<OllamaTagModel[]> {
    const response = await this.request('GET', '/api/tags');
    return ((await response.json()) as { models?: OllamaTagModel[] }).models ?? [];
  }

  async running(): Promise<OllamaRunningModel[]> {
    const response = await this.request('GET', '/api/ps');
    return ((await response.json()) as { models?: OllamaRunningModel[] }).models ?? [];
  }

  async show(model: string): Promise<OllamaShowResponse> {
    const response = await this.post('/api/show', { model });
    return (await response.json()) as OllamaShowResponse;
  }

  /** Pull progress records (`pulling manifest`, `downloading <digest>` with total/completed, …, `success`). */
  async *pull(model: string, signal?: AbortSignal): AsyncGenerator<OllamaPullProgress> {
    const response = await this.post('/api/pull', { model, stream: true }, signal);
    for await (const line of ndjsonLines(response)) yield parseRecord(line) as OllamaPullProgress;
  }

  /** Uploads a file as a blob named by its SHA-256 (`sha256:<hex>`); Ollama checks the digest. */
  async pushBlob(digest: string, body: ReadableStream<Uint8Array> | Blob, size: number): Promise<void> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/api/blobs/${digest}`, {
        method: 'POST',
        headers: { 'content-length': String(size) },
        body,
        duplex: 'half',
      } as RequestInit);
    } catch (error) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `The model runtime at ${this.baseUrl} cannot be reached (${(error as Error).message})`,
      );
    }
    if (!response.ok)
      throw new PlatformError('BAD_REQUEST', `The runtime refused the blob: ${await errorMessageOf(response)}`);
    await response.arrayBuffer();
  }

  /** Creates a model from uploaded files (`{"model.gguf": "sha256:…"}`), yielding the runtime's status lines. */
  async *create(model: string, files: Record<string, string>): AsyncGenerator<OllamaPullProgress> {
    const response = await this.post('/api/create', { model, files, stream: true });
    for await (const line of ndjsonLines(response)) yield parseRecord(line) as OllamaPullProgress;
  }

  async delete(model: string): Promise<void> {
    await this.request('DELETE', '/api/delete', { model });
  }

  /**
   * Loads a model into memory for `keepAlive` (or unloads it with 0): an empty generate for chat models,
   * an empty embed for embedding models, as Ollama documents.
   */
  async keepAlive(model: string, keepAlive: string | number, embedding: boolean): Promise<void> {
    if (embedding) await this.post('/api/embed', { model, input: [], keep_alive: keepAlive });
    else await this.post('/api/generate', { model, prompt: '', stream: false, keep_alive: keepAlive });
  }

  /** The runtime's version (`/api/version`), or null when it cannot be reached. */
  async version(): Promise<string | null> {
    try {
      const response = await this.request('GET', '/api/version', undefined, AbortSignal.timeout(2000));
      return ((await response.json()) as { version?: string }).version ?? null;
    } catch {
      return null;
    }
  }

  private post(path: string, body: unknown, signal?: AbortSignal): Promise<RuntimeResponse> {
    return this.request('POST', path, body, signal);
  }

  private async request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<RuntimeResponse> {
    let response: RuntimeResponse;
    try {
      response = await send(
        `${this.baseUrl}${path}`,
        method,
        body === undefined ? undefined : JSON.stringify(body),
        signal,
      );
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `The model runtime at ${this.baseUrl} cannot be reached (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    if (response.ok) return response;
    const message = await errorMessageOf(response);
    if (response.status === 404) throw new PlatformError('NOT_FOUND', message);
    if (response.status >= 400 && response.status < 500) throw new PlatformError('BAD_REQUEST', message);
    throw new PlatformError('BAD_GATEWAY', `The model runtime failed (${response.status}): ${message}`);
  }
}

async function errorMessageOf(response: Pick<RuntimeResponse, 'status' | 'text'>): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON: the text itself
  }
  return text.trim().slice(0, 500) || `HTTP ${response.status}`;
}

/** Splits an NDJSON body into its non-empty lines as they arrive. */
export async function* ndjsonLines(response: Pick<RuntimeResponse, 'body'>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) yield line;
    }
  }
  const rest = (buffered + decoder.decode()).trim();
  if (rest) yield rest;
}
