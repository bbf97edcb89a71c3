import type { LoadConfigOptions } from '../load-config-options.js';
import { MiB, type EnvironmentReader, type ListenConfig } from './environment-reader.js';
import type { DatabaseConfig } from './infrastructure.js';

export const GATEWAY_SETTINGS_STORES = ['auto', 'file', 'database'] as const;

/** The model gateway's process settings; what an admin may change at run time lives in DATA_DIR/gateway/config.json. */
export interface GatewayConfig extends ListenConfig {
  /** OLLAMA_URL: the model runtime; when set it overrides `ollama_url` of the gateway's config file. */
  ollamaUrl: string | null;
  /** GATEWAY_IMAGE_MAX_BYTES: largest image fetched from an http(s) `image_url` (OpenAI allows 20 MB). */
  imageMaxBytes: number;
  /** GATEWAY_IMAGE_FETCH_TIMEOUT_MS: how long fetching one remote image may take. */
  imageFetchTimeoutMs: number;
  /** GATEWAY_IMAGE_ALLOW_PRIVATE: let image URLs reach loopback and private networks (off: public addresses only). */
  imageAllowPrivate: boolean;
  /** GATEWAY_MODEL_CACHE_SECONDS: how long a model's `/api/show` capabilities are reused. */
  modelCacheSeconds: number;
  /** GATEWAY_CHAT_BODY_LIMIT: largest chat completion body (data-URL images and input audio travel inside it). */
  chatBodyMaxBytes: number;
  /** GATEWAY_EMBEDDINGS_BODY_LIMIT: largest embeddings body. */
  embeddingsBodyMaxBytes: number;
  /** GATEWAY_BODY_LIMIT: largest body of every other JSON route (speech, live sessions, signup, admin). */
  bodyMaxBytes: number;
  /** TTS_URL / STT_URL: OpenAI-audio backends (base URL with /v1) for speech and transcription; null answers 501. */
  ttsUrl: string | null;
  sttUrl: string | null;
  /** TTS_API_KEY / STT_API_KEY: the bearer token those backends want, if any. */
  ttsApiKey: string | null;
  sttApiKey: string | null;
  /** HF_BASE_URL: the model hub `download-hf` and `search-hf` use (its token is `hf_token` of the gateway config). */
  hubUrl: string;
  /** GATEWAY_HUB_MAX_BYTES: largest model file downloaded from the hub or uploaded as GGUF. */
  hubMaxBytes: number;
  /**
   * GATEWAY_SETTINGS_STORE: where the admin-changeable settings and the admin key live. `auto` is the database
   * when it is MySQL/MariaDB (shared by every node, so a change holds everywhere), else DATA_DIR/gateway/config.json.
   */
  settingsStore: 'file' | 'database';
}

// The gateway sits behind its operator's choice of proxy: loopback unless told otherwise.
export function readGatewaySection(
  read: EnvironmentReader,
  database: Pick<DatabaseConfig, 'type'>,
  options: LoadConfigOptions,
): GatewayConfig {
  return {
    host: read.string('GATEWAY_HOST') ?? '127.0.0.1',
    port: options.gatewayPort ?? read.port('GATEWAY_PORT', 4000),
    ollamaUrl: read.baseUrl('OLLAMA_URL'),
    imageMaxBytes: read.integer('GATEWAY_IMAGE_MAX_BYTES', 20 * MiB, { min: 1 }),
    imageFetchTimeoutMs: read.integer('GATEWAY_IMAGE_FETCH_TIMEOUT_MS', 10_000, { min: 1 }),
    imageAllowPrivate: read.boolean('GATEWAY_IMAGE_ALLOW_PRIVATE', false),
    modelCacheSeconds: read.integer('GATEWAY_MODEL_CACHE_SECONDS', 60, { min: 0 }),
    // OpenAI takes 20 MB images, but a chat with pictures needs a few MiB; the caps are read before the body.
    chatBodyMaxBytes: read.size('GATEWAY_CHAT_BODY_LIMIT', 8 * MiB),
    embeddingsBodyMaxBytes: read.size('GATEWAY_EMBEDDINGS_BODY_LIMIT', 2 * MiB),
    bodyMaxBytes: read.size('GATEWAY_BODY_LIMIT', 256 * 1024),
    ttsUrl: read.baseUrl('TTS_URL'),
    sttUrl: read.baseUrl('STT_URL'),
    ttsApiKey: read.string('TTS_API_KEY'),
    sttApiKey: read.string('STT_API_KEY'),
    hubUrl: (read.string('HF_BASE_URL') ?? 'https://huggingface.co').replace(/\/+$/, ''),
    hubMaxBytes: read.integer('GATEWAY_HUB_MAX_BYTES', 64 * 1024 * MiB, { min: 1 }),
    settingsStore: gatewaySettingsStore(
      read.oneOf('GATEWAY_SETTINGS_STORE', GATEWAY_SETTINGS_STORES, 'auto'),
      database,
    ),
  };
}

function gatewaySettingsStore(
  choice: (typeof GATEWAY_SETTINGS_STORES)[number],
  database: Pick<DatabaseConfig, 'type'>,
): GatewayConfig['settingsStore'] {
  if (choice !== 'auto') return choice;
  return database.type === 'mysql' ? 'database' : 'file';
}
