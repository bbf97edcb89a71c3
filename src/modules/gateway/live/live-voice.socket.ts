import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { MeteringService } from '../accounts/metering.service.js';
import { GatewayRateLimitGuard } from '../accounts/gateway-rate-limit.guard.js';
import { costMicros, fromMicros } from '../accounts/money.js';
import { AudioService } from '../audio.service.js';
import { ChatService, estimatePromptTokens } from '../chat/chat.service.js';
import { parseChatRequest } from '../chat/chat-request.js';
import { hashSessionToken, LiveSessionsService, type LiveSession } from './live-sessions.service.js';
import { applyWakeWord, takeSentences } from './voice-text.js';

export const LIVE_SOCKET_PATH = /^\/v1\/audio\/live\/ws\/([A-Za-z0-9-]{1,100})\/?$/;
/** The original's close code for an unknown, closed or expired session token. */
export const INVALID_SESSION_CLOSE = 4004;
/** Audio travels as base64 pieces of at most this many bytes. */
const AUDIO_CHUNK_BYTES = 4096;

interface Turn {
  abort: AbortController;
  output: string;
}

interface Connection {
  socket: WebSocket;
  session: LiveSession;
  turn: Turn | null;
}

type ClientMessage = { type?: unknown; transcript?: unknown; is_final?: unknown };

/**
 * The live-voice WebSocket, `WS /v1/audio/live/ws/{token}`, on the HTTP server's `upgrade` (Nest's WS
 * gateways only match static paths). Speech recognition happens in the client, which sends text; each
 * `end_turn` streams the chat model's answer as `text` deltas, cuts it into sentences and sends each as
 * `audio` from the TTS backend as soon as it is complete. `interrupt` aborts the upstream generation at
 * once (messages are handled while a turn runs). Turns are metered and rate-limited like chat.
 */
@Injectable()
export class LiveVoiceSocket implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('GatewayLive');
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly connections = new Set<Connection>();
  private httpServer: Server | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const match = LIVE_SOCKET_PATH.exec((request.url ?? '').split('?')[0]);
    if (!match) return;
    this.server.handleUpgrade(request, socket, head, (ws) => void this.accept(ws, match[1]));
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly sessions: LiveSessionsService,
    private readonly chat: ChatService,
    private readonly audio: AudioService,
    private readonly metering: MeteringService,
    private readonly rateLimit: GatewayRateLimitGuard,
  ) {}

  onApplicationBootstrap(): void {
    this.httpServer = this.adapterHost.httpAdapter?.getHttpServer() as Server | null;
    this.httpServer?.on('upgrade', this.onUpgrade);
  }

  onApplicationShutdown(): void {
    this.httpServer?.off('upgrade', this.onUpgrade);
    for (const connection of this.connections) connection.socket.close(1001, 'Server shutting down');
    this.server.close();
  }

  /** Closes this process's sockets of a session (DELETE); other processes notice at the next message. */
  disconnect(token: string): void {
    const tokenHash = hashSessionToken(token);
    for (const connection of this.connections) {
      if (connection.session.tokenHash === tokenHash) connection.socket.close(1000, 'Session closed');
    }
  }

  private send(connection: Connection, message: Record<string, unknown>): void {
    if (connection.socket.readyState === WebSocket.OPEN) connection.socket.send(JSON.stringify(message));
  }

  private async accept(socket: WebSocket, token: string): Promise<void> {
    const session = await this.sessions.find(token).catch(() => null);
    if (!session) {
      socket.close(INVALID_SESSION_CLOSE, 'Invalid or expired session');
      return;
    }
    const connection: Connection = { socket, session, turn: null };
    this.connections.add(connection);
    const expiry = setTimeout(
      () => socket.close(INVALID_SESSION_CLOSE, 'Session expired'),
      session.expiresAt.getTime() - Date.now(),
    );
    expiry.unref();
    socket.on('close', () => {
      clearTimeout(expiry);
      connection.turn?.abort.abort();
      this.connections.delete(connection);
    });
    socket.on('message', (data: RawData) => void this.onMessage(connection, data));
    const { config } = session;
    this.send(connection, {
      type: 'ready',
      session_token: token,
      config: {
        audio: { output_format: config.voice.format, allow_interrupt: config.allow_interrupt },
        wake_word: config.wake_word,
        voice: config.voice,
      },
    });
  }

  private async onMessage(connection: Connection, data: RawData): Promise<void> {
    let message: ClientMessage;
    try {
      message = JSON.parse(data.toString()) as ClientMessage;
    } catch {
      this.send(connection, { type: 'error', message: 'Messages must be JSON' });
      return;
    }
    if (!(await this.sessions.isOpen(connection.session.tokenHash).catch(() => false))) {
      connection.socket.close(INVALID_SESSION_CLOSE, 'Invalid or expired session');
      return;
    }
    switch (message.type) {
      case 'ping':
        this.send(connection, { type: 'pong' });
        return;
      case 'audio':
        if (typeof message.transcript === 'string' && message.transcript.trim()) {
          this.send(connection, {
            type: 'transcript',
            text: message.transcript,
            is_input: true,
            is_final: message.is_final === true,
          });
        }
        return;
      case 'interrupt':
        if (connection.turn && connection.session.config.allow_interrupt) {
          const turn = connection.turn;
          turn.abort.abort();
          this.send(connection, { type: 'interrupted', partial_output: turn.output });
        }
        return;
      case 'end_turn':
        if (connection.turn) {
          this.send(connection, { type: 'error', message: 'A turn is still running; interrupt it first' });
          return;
        }
        await this.runTurn(connection, typeof message.transcript === 'string' ? message.transcript : '');
        return;
      case 'close':
        connection.socket.close(1000, 'Closed by the client');
        return;
      default:
        return; // unknown types are ignored, as the original did
    }
  }

  private async runTurn(connection: Connection, transcript: string): Promise<void> {
    const { session } = connection;
    const { llm, wake_word: wakeWord } = session.config;
    if (!transcript.trim()) return this.send(connection, { type: 'error', message: 'Empty transcript' });
    const text = applyWakeWord(transcript, wakeWord);
    if (text === null) return this.send(connection, { type: 'wake_word_required', message: 'Wake word not detected' });
    if (!text) return this.send(connection, { type: 'error', message: 'No content after wake word processing' });
    const started = Date.now();
    const turn: Turn = { abort: new AbortController(), output: '' };
    connection.turn = turn;
    const history = session.history.slice(-llm.history_length);
    const messages = [
      ...(llm.system_prompt ? [{ role: 'system', content: llm.system_prompt }] : []),
      ...history.map((entry) => ({
        role: entry.role,
        content: entry.interrupted ? `${entry.content} [INTERRUPTED BY USER]` : entry.content,
      })),
      { role: 'user', content: text },
    ];
    const body = {
      model: llm.model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
      temperature: llm.temperature,
      max_tokens: llm.max_tokens,
    };
    const tools: string[] = [];
    let speaking = Promise.resolve();
    const speak = (sentence: string) => {
      speaking = speaking.then(() => this.speak(connection, turn, sentence));
    };
    let interrupted = false;
    let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
    try {
      await this.rateLimit.consume(session.caller);
      const stream = await this.chat.startStream(session.caller, body, turn.abort.signal);
      let buffer = '';
      try {
        for await (const chunk of stream.chunks) {
          const delta = chunk.choices[0]?.delta;
          for (const call of delta?.tool_calls ?? []) tools.push(call.function.name);
          if (!delta?.content) continue;
          this.send(connection, { type: 'text', text: delta.content, is_final: false });
          turn.output += delta.content;
          const { sentences, rest } = takeSentences(buffer + delta.content);
          buffer = rest;
          sentences.forEach(speak);
        }
        if (buffer.trim()) speak(buffer.trim());
      } catch (error) {
        if (!turn.abort.signal.aborted) throw error;
      }
      interrupted = turn.abort.signal.aborted;
      usage = stream.translator.usage ?? {
        prompt_tokens: estimatePromptTokens(parseChatRequest(body)),
        completion_tokens: stream.translator.generatedRecords,
      };
      await speaking;
    } catch (error) {
      connection.turn = null;
      this.send(connection, { type: 'error', message: (error as Error).message });
      return;
    }
    connection.turn = null;
    session.history.push(
      { role: 'user', content: text },
      { role: 'assistant', content: turn.output, ...(interrupted ? { interrupted } : {}) },
    );
    await this.sessions
      .saveHistory(session.tokenHash, session.history)
      .catch((error: unknown) =>
        this.logger.warn(`saving a live session's history failed: ${(error as Error).message}`),
      );
    const charged = session.caller.userId !== null && session.caller.tier === 'payg';
    const cost = charged
      ? costMicros(this.metering.priceOf(llm.model), usage.prompt_tokens, usage.completion_tokens)
      : 0;
    this.send(connection, {
      type: 'turn_complete',
      input_transcript: text,
      output_transcript: turn.output,
      tools_called: tools,
      interrupted,
      usage: { tokens_in: usage.prompt_tokens, tokens_out: usage.completion_tokens },
      cost: fromMicros(cost),
      latency_ms: Date.now() - started,
    });
  }

  /** Synthesizes one sentence and sends it in base64 pieces; nothing once the turn was interrupted. */
  private async speak(connection: Connection, turn: Turn, sentence: string): Promise<void> {
    if (turn.abort.signal.aborted) return;
    const { voice } = connection.session.config;
    try {
      const answer = await this.audio.synthesize({
        model: voice.model,
        input: sentence,
        voice: voice.voice,
        response_format: voice.format,
        speed: voice.speed,
      });
      if (turn.abort.signal.aborted) return;
      for (let offset = 0; offset < answer.body.length; offset += AUDIO_CHUNK_BYTES) {
        this.send(connection, {
          type: 'audio',
          audio: answer.body.subarray(offset, offset + AUDIO_CHUNK_BYTES).toString('base64'),
          format: voice.format,
          text: sentence,
        });
      }
    } catch (error) {
      this.send(connection, { type: 'error', message: `Speech failed: ${(error as Error).message}` });
    }
  }
}
