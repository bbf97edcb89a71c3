import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, type Repository } from 'typeorm';
import { PlatformError } from '../../../common/errors.js';
import { ChatService } from '../chat/chat.service.js';
import { GatewayLiveSessionEntity } from '../entities/gateway-live-session.entity.js';
import { AudioService } from '../audio.service.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { WAKE_WORD_MODES, type WakeWordConfig, type WakeWordMode } from './voice-text.js';

export const SESSION_TTL_MINUTES = { min: 5, max: 20, default: 15 } as const;

/** What a session was created with (the original's request, with its defaults). */
export interface LiveSessionConfig {
  llm: { model: string; system_prompt: string | null; temperature: number; max_tokens: number; history_length: number };
  voice: { model: string; voice: string; speed: number; format: string };
  wake_word: WakeWordConfig;
  allow_interrupt: boolean;
}

export interface LiveSession {
  tokenHash: string;
  caller: GatewayCaller;
  config: LiveSessionConfig;
  history: GatewayLiveSessionEntity['history'];
  createdAt: Date;
  expiresAt: Date;
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function fail(param: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field: param, message }]);
}

function numberIn(value: unknown, fallback: number, min: number, max: number, param: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    fail(param, `'${param}' must be a number from ${min} to ${max}`);
  }
  return value;
}

/** Checks `POST /v1/audio/live` (the original's fields: llm_config, voice_config, wake_word_config, audio_config, session_ttl_minutes). */
export function parseLiveSessionRequest(body: unknown): { config: LiveSessionConfig; ttlMinutes: number } {
  if (!isObject(body)) fail('body', 'The request body must be a JSON object');
  const llm = isObject(body.llm_config) ? body.llm_config : {};
  if (typeof llm.model !== 'string' || !llm.model.trim()) fail('llm_config.model', "'llm_config.model' is required");
  const voice = isObject(body.voice_config) ? body.voice_config : {};
  const wake = isObject(body.wake_word_config) ? body.wake_word_config : {};
  const audio = isObject(body.audio_config) ? body.audio_config : {};
  const words = wake.words ?? [];
  if (!Array.isArray(words) || !words.every((word) => typeof word === 'string' && word.trim())) {
    fail('wake_word_config.words', "'wake_word_config.words' must be an array of words");
  }
  const mode = wake.mode ?? 'pre';
  if (!WAKE_WORD_MODES.includes(mode as WakeWordMode))
    fail('wake_word_config.mode', "'wake_word_config.mode' must be pre, post or mid");
  const format = audio.output_format ?? 'mp3';
  if (!['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'].includes(format as string)) {
    fail('audio_config.output_format', "'audio_config.output_format' must be one of mp3, opus, aac, flac, wav, pcm");
  }
  const ttl = body.session_ttl_minutes ?? SESSION_TTL_MINUTES.default;
  if (
    typeof ttl !== 'number' ||
    !Number.isInteger(ttl) ||
    ttl < SESSION_TTL_MINUTES.min ||
    ttl > SESSION_TTL_MINUTES.max
  ) {
    fail(
      'session_ttl_minutes',
      `'session_ttl_minutes' must be a whole number from ${SESSION_TTL_MINUTES.min} to ${SESSION_TTL_MINUTES.max}`,
    );
  }
  return {
    ttlMinutes: ttl,
    config: {
      llm: {
        model: llm.model.trim(),
        system_prompt: typeof llm.system_prompt === 'string' ? llm.system_prompt : null,
        temperature: numberIn(llm.temperature, 0.7, 0, 2, 'llm_config.temperature'),
        max_tokens: numberIn(llm.max_tokens, 1024, 1, 32_768, 'llm_config.max_tokens'),
        history_length: numberIn(llm.history_length, 20, 0, 200, 'llm_config.history_length'),
      },
      voice: {
        model: typeof voice.model === 'string' && voice.model ? voice.model : 'tts',
        voice: typeof voice.voice_id === 'string' && voice.voice_id ? voice.voice_id : 'alloy',
        speed: numberIn(voice.speed, 1, 0.25, 4, 'voice_config.speed'),
        format: format as string,
      },
      wake_word: { enabled: wake.enabled === true, words: words as string[], mode: mode as WakeWordMode },
      allow_interrupt: audio.allow_interrupt !== false,
    },
  };
}

/** Live voice sessions: created by a key, used by a WebSocket that presents the token, closed or expired. */
@Injectable()
export class LiveSessionsService {
  constructor(
    @InjectRepository(GatewayLiveSessionEntity) private readonly sessions: Repository<GatewayLiveSessionEntity>,
    private readonly chat: ChatService,
    private readonly audio: AudioService,
  ) {}

  async create(
    caller: GatewayCaller,
    body: unknown,
  ): Promise<{ token: string; expiresAt: Date; config: LiveSessionConfig }> {
    if (!this.audio.speechConfigured) {
      throw new PlatformError('NOT_IMPLEMENTED', 'Live voice needs text-to-speech: set TTS_URL');
    }
    const { config, ttlMinutes } = parseLiveSessionRequest(body);
    // The model must exist and chat now, not at the first turn.
    config.llm.model = (await this.chat.route(config.llm.model, 'chat')).model;
    if (caller.userId) await this.sessions.delete({ userId: caller.userId, expiresAt: LessThan(new Date()) });
    const token = `live-${randomBytes(16).toString('hex')}`;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMinutes * 60_000);
    await this.sessions.save(
      this.sessions.create({
        tokenHash: hashSessionToken(token),
        userId: caller.userId,
        keyId: caller.keyId,
        tier: caller.tier,
        config: config as unknown as Record<string, unknown>,
        history: [],
        createdAt: now,
        expiresAt,
        closedAt: null,
      }),
    );
    return { token, expiresAt, config };
  }

  /** The open, unexpired session of a token, or null. */
  async find(token: string): Promise<LiveSession | null> {
    const row = await this.sessions.findOne({ where: { tokenHash: hashSessionToken(token), closedAt: IsNull() } });
    if (!row || row.expiresAt.getTime() <= Date.now()) return null;
    return {
      tokenHash: row.tokenHash,
      caller: {
        admin: row.tier === 'admin' && row.userId === null,
        userId: row.userId,
        keyId: row.keyId,
        email: null,
        tier: row.tier,
      },
      config: row.config as unknown as LiveSessionConfig,
      history: row.history,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
    };
  }

  /** The session as its owner (or the admin) may see it; 404 for unknown, expired, closed or someone else's. */
  async get(caller: GatewayCaller, token: string): Promise<LiveSession> {
    const session = await this.find(token);
    if (!session || (!caller.admin && session.caller.userId !== caller.userId)) {
      throw new PlatformError('NOT_FOUND', 'Session not found (unknown, expired or closed)');
    }
    return session;
  }

  async close(caller: GatewayCaller, token: string): Promise<void> {
    const session = await this.get(caller, token);
    await this.sessions.update({ tokenHash: session.tokenHash }, { closedAt: new Date() });
  }

  async saveHistory(tokenHash: string, history: LiveSession['history']): Promise<void> {
    await this.sessions.update({ tokenHash }, { history });
  }

  async isOpen(tokenHash: string): Promise<boolean> {
    const row = await this.sessions.findOne({
      where: { tokenHash },
      select: { closedAt: true, expiresAt: true, tokenHash: true },
    });
    return Boolean(row && !row.closedAt && row.expiresAt.getTime() > Date.now());
  }
}
