import { openAsBlob } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { PlatformError } from '../../common/errors.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { GATEWAY_CONFIG, INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { GatewayConfig, InfrastructureConfig } from '../../config/config.js';
import { MeteringService } from './accounts/metering.service.js';
import type { GatewayCaller } from './gateway-caller.js';

/** OpenAI's limits: 4,096 characters of speech input, 25 MB of audio to transcribe. */
export const SPEECH_MAX_CHARACTERS = 4096;
export const TRANSCRIPTION_MAX_BYTES = 25 * 1024 * 1024;

const SPEECH_FORMATS: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];

export interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  response_format: string;
  speed: number;
  instructions?: string;
}

function fail(param: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field: param, message }]);
}

export function parseSpeechRequest(body: unknown): SpeechRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    fail('body', 'The request body must be a JSON object');
  const value = body as Record<string, unknown>;
  if (typeof value.model !== 'string' || !value.model.trim()) fail('model', "'model' is required");
  if (typeof value.input !== 'string' || value.input.length === 0) fail('input', "'input' is required");
  if (value.input.length > SPEECH_MAX_CHARACTERS)
    fail('input', `'input' is longer than ${SPEECH_MAX_CHARACTERS} characters`);
  if (typeof value.voice !== 'string' || !value.voice.trim()) fail('voice', "'voice' is required");
  const format = value.response_format ?? 'mp3';
  if (typeof format !== 'string' || !(format in SPEECH_FORMATS)) {
    fail('response_format', `'response_format' must be one of ${Object.keys(SPEECH_FORMATS).join(', ')}`);
  }
  const speed = value.speed ?? 1;
  if (typeof speed !== 'number' || speed < 0.25 || speed > 4) fail('speed', "'speed' must be a number from 0.25 to 4");
  return {
    model: value.model.trim(),
    input: value.input,
    voice: value.voice,
    response_format: format,
    speed,
    ...(typeof value.instructions === 'string' ? { instructions: value.instructions } : {}),
  };
}

/** An answer from a speech backend, passed on as it came (bytes and media type). */
export interface AudioAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * `/v1/audio/speech` and `/v1/audio/transcriptions`. Ollama has no speech endpoints, so both go to
 * configured backends that speak the OpenAI audio API (TTS_URL, STT_URL); without one the route is a 501
 * that says which variable to set. Metered like chat: speech by input characters as prompt tokens,
 * transcription by the tokens the backend reports (`usage`), zero when it reports none.
 */
@Injectable()
export class AudioService {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly gateway: GatewayConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
    private readonly metering: MeteringService,
  ) {}

  async speech(caller: GatewayCaller, body: unknown): Promise<AudioAnswer> {
    const { ttsUrl, ttsApiKey } = this.gateway;
    if (!ttsUrl)
      throw new PlatformError('NOT_IMPLEMENTED', 'Text-to-speech is not configured on this gateway (set TTS_URL)');
    const request = parseSpeechRequest(body);
    const ticket = await this.metering.begin(caller, {
      endpoint: 'audio.speech',
      model: request.model,
      promptTokensEstimate: request.input.length,
      maxCompletionTokens: 0,
    });
    try {
      const answer = await this.forward(`${ttsUrl}/audio/speech`, ttsApiKey, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      await this.metering.finish(ticket, { promptTokens: request.input.length, completionTokens: 0, status: 200 });
      return { ...answer, contentType: answer.contentType || SPEECH_FORMATS[request.response_format] };
    } catch (error) {
      await this.metering.finish(ticket, {
        promptTokens: 0,
        completionTokens: 0,
        status: (error as { status?: number }).status ?? 500,
      });
      throw error;
    }
  }

  /** Synthesizes one piece of text without metering (a live-voice turn is billed as its chat). */
  async synthesize(request: SpeechRequest): Promise<AudioAnswer> {
    const { ttsUrl, ttsApiKey } = this.gateway;
    if (!ttsUrl)
      throw new PlatformError('NOT_IMPLEMENTED', 'Text-to-speech is not configured on this gateway (set TTS_URL)');
    const answer = await this.forward(`${ttsUrl}/audio/speech`, ttsApiKey, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    return { ...answer, contentType: answer.contentType || SPEECH_FORMATS[request.response_format] };
  }

  get speechConfigured(): boolean {
    return this.gateway.ttsUrl !== null;
  }

  async transcription(caller: GatewayCaller, request: Request): Promise<AudioAnswer> {
    const { sttUrl, sttApiKey } = this.gateway;
    if (!sttUrl)
      throw new PlatformError('NOT_IMPLEMENTED', 'Speech-to-text is not configured on this gateway (set STT_URL)');
    if (!String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      fail('file', 'Send the audio as multipart/form-data with a file field');
    }
    const upload = await readMultipart(request, {
      fileField: 'file',
      tempRoot: uploadTempRoot(this.infrastructure),
      maxFileBytes: TRANSCRIPTION_MAX_BYTES,
    });
    try {
      const { fields, file } = upload;
      if (!file) fail('file', "'file' is required");
      if (!fields.model) fail('model', "'model' is required");
      const format = fields.response_format ?? 'json';
      if (!TRANSCRIPTION_FORMATS.includes(format)) {
        fail('response_format', `'response_format' must be one of ${TRANSCRIPTION_FORMATS.join(', ')}`);
      }
      const ticket = await this.metering.begin(caller, {
        endpoint: 'audio.transcriptions',
        model: fields.model,
        promptTokensEstimate: 0,
        maxCompletionTokens: 0,
      });
      try {
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.append(name, value);
        form.append('file', await openAsBlob(file.path, { type: file.mimeType }), file.filename || 'audio');
        const answer = await this.forward(`${sttUrl}/audio/transcriptions`, sttApiKey, { body: form });
        const usage = reportedUsage(answer);
        await this.metering.finish(ticket, { ...usage, status: 200 });
        return answer;
      } catch (error) {
        await this.metering.finish(ticket, {
          promptTokens: 0,
          completionTokens: 0,
          status: (error as { status?: number }).status ?? 500,
        });
        throw error;
      }
    } finally {
      await upload.cleanup();
    }
  }

  private async forward(
    url: string,
    apiKey: string | null,
    init: { headers?: Record<string, string>; body: string | FormData },
  ): Promise<AudioAnswer> {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { ...(init.headers ?? {}), ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: init.body,
        signal: AbortSignal.timeout(600_000),
      });
    } catch (error) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `The speech backend at ${url} cannot be reached (${(error as Error).message})`,
      );
    }
    const body = Buffer.from(await response.arrayBuffer());
    if (!response.ok) {
      const detail = body.toString('utf8').slice(0, 500);
      if (response.status >= 400 && response.status < 500)
        throw new PlatformError('BAD_REQUEST', `The speech backend refused: ${detail}`);
      // It answered, badly: a 502; 503 stays for a backend that cannot be reached.
      throw new PlatformError('BAD_GATEWAY', `The speech backend failed (${response.status}): ${detail}`);
    }
    return { status: 200, contentType: response.headers.get('content-type') ?? '', body };
  }
}

/** OpenAI transcription usage: `{type:"tokens", input_tokens, output_tokens}` (or `duration`, which costs no tokens here). */
function reportedUsage(answer: AudioAnswer): { promptTokens: number; completionTokens: number } {
  if (!answer.contentType.includes('json')) return { promptTokens: 0, completionTokens: 0 };
  try {
    const usage = (
      JSON.parse(answer.body.toString('utf8')) as { usage?: { input_tokens?: number; output_tokens?: number } }
    ).usage;
    return { promptTokens: usage?.input_tokens ?? 0, completionTokens: usage?.output_tokens ?? 0 };
  } catch {
    return { promptTokens: 0, completionTokens: 0 };
  }
}
