import { MULTIPART_OVERHEAD_BYTES } from '../../common/multipart-reader.js';
import type { PlatformConfig } from '../../config/config.js';
import { TRANSCRIPTION_MAX_BYTES } from './audio.service.js';

/**
 * The gateway's body caps by route, named by `@BodyLimit(name)` on the routes; a route without a name gets
 * GATEWAY_BODY_LIMIT (speech, live sessions, signup, admin JSON). The key is checked before any of them is read.
 */
export const GATEWAY_BODY_LIMIT = {
  /** Chat completions: data-URL images and input audio travel in the JSON (GATEWAY_CHAT_BODY_LIMIT). */
  chat: 'chat',
  /** Embeddings: text only (GATEWAY_EMBEDDINGS_BODY_LIMIT). */
  embeddings: 'embeddings',
  /** Transcription uploads: OpenAI's 25 MB of audio plus the multipart framing. */
  transcription: 'transcription',
  /** GGUF uploads of the admin: GATEWAY_HUB_MAX_BYTES plus the multipart framing. */
  ggufUpload: 'gguf-upload',
} as const;

export function gatewayBodyLimits(config: PlatformConfig): Record<string, number> {
  return {
    [GATEWAY_BODY_LIMIT.chat]: config.gateway.chatBodyMaxBytes,
    [GATEWAY_BODY_LIMIT.embeddings]: config.gateway.embeddingsBodyMaxBytes,
    [GATEWAY_BODY_LIMIT.transcription]: TRANSCRIPTION_MAX_BYTES + MULTIPART_OVERHEAD_BYTES,
    [GATEWAY_BODY_LIMIT.ggufUpload]: config.gateway.hubMaxBytes + MULTIPART_OVERHEAD_BYTES,
  };
}
