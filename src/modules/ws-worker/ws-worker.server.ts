import { randomBytes, randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application } from 'express';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { clientAddressOf } from '../../common/client-address.js';
import { PlatformError } from '../../common/errors.js';
import { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { SessionCookies } from '../../auth/session-cookie/session-cookies.js';
import { loginIdOf } from '../../auth/shared-store/live-credentials.js';
import {
  AUTH_REVOKED_TOPIC,
  readRevokedCredential,
  type RevokedCredential,
} from '../../auth/shared-store/revocations.js';
import { MESSAGE_BROKER, type MessageBroker } from '../../broker/message-broker.js';
import { HTTP_WORKER_CONFIG, WS_WORKER_CONFIG } from '../../config/config.module.js';
import type { HttpWorkerConfig, WsWorkerConfig } from '../../config/config.js';
import { AppCoreService } from '../app-core/app-core.service.js';
import { runAsCaller, type Caller } from '../app-core/caller.js';
import { FunctionRegistryService } from '../app-core/function-registry.service.js';
import { Result } from '../app-core/result.js';
import { decideAccess } from '../http-worker/function-access.js';
import { corsOriginRule } from '../http-worker/index.js';
import { WsChannels } from '../app-core/ws-channels.js';
import { WS_BROKER_TOPIC, readWsCommand, wsFrameText } from '../app-core/ws-commands.js';
import { ConnectionHub } from './connection-hub.js';
import { addressKey, ConnectionSlots, type SlotRefusal } from './connection-slots.js';
import { websocketOriginRule } from './ws-origin.js';
import { resolveWsRoute, type WsRoute } from './ws-route.js';
import { credentialRequestOf, wsSessionOf, type WsSession } from './ws-session.js';

/** Close codes (RFC 6455 §7.4.1 and the IANA registry). */
export const WS_CLOSE = {
  NORMAL: 1000,
  GOING_AWAY: 1001,
  POLICY_VIOLATION: 1008,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
  TRY_AGAIN_LATER: 1013,
  /** Application range (4000–4999): the credential the connection was opened with was revoked (logout). */
  SESSION_ENDED: 4001,
} as const;

/**
 * What a handler receives first: the connection, its session and caller, and the channel operations
 * (the same as `app.ws`, bound to this connection where it makes sense).
 */
export interface WsConnectionContext {
  conn_id: string;
  path: string;
  /** `Module/handler`. */
  handler: string;
  session: WsSession;
  caller: Caller;
  send(data: unknown): Promise<void>;
  join(channel: string): Promise<void>;
  leave(channel: string): Promise<void>;
  broadcast(channel: string, data: unknown, options?: { exclude?: string[] }): Promise<void>;
  close(code?: number, reason?: string): Promise<void>;
  /** Every connection of every WS worker (`app.ws`). */
  channels: WsChannels;
  app: AppCoreService;
}

interface LiveConnection {
  id: string;
  socket: WebSocket;
  route: WsRoute;
  context: WsConnectionContext;
  alive: boolean;
  /** Handler calls run one after another per connection, in the order the frames arrived. */
  queue: Promise<void>;
  queued: number;
  /** The credential it was opened with, so a revocation announced on the broker can end it. */
  credential: Pick<Principal, 'platformUserId' | 'tokenId' | 'sessionId' | 'loginId'> | null;
}

/** How long a closing peer has to answer the close frame before its socket is destroyed. */
const CLOSE_HANDSHAKE_TIMEOUT_MS = 2000;

/** Frames a connection may have waiting for its handler before the worker stops reading its socket. */
const MAX_QUEUED_MESSAGES = 64;

/** Counters for /metrics-style reporting and the bench. */
export interface WsWorkerStats {
  connections: number;
  connectionsTotal: number;
  messagesReceived: number;
  handlerErrors: number;
  refused: Record<
    | 'unauthorized'
    | 'forbidden'
    | 'overloaded'
    | 'not_found'
    | 'origin'
    | 'per_address'
    | 'per_user'
    | 'anonymous_share',
    number
  >;
}

/**
 * The WebSocket worker on the Nest application's HTTP server: `/ws/{Module}/{handler}` and
 * `/ws/{handler}` upgrade to a connection routed to the app core's `websocketHandler` of that name; every
 * other request (`GET /health`) stays plain HTTP. Nest's gateway layer (@nestjs/platform-ws) matches one
 * static path per gateway (`pathname === path`) and speaks `{event, data}` frames, so it cannot serve
 * path-routed handlers with raw frames: the `ws` server is attached to the HTTP server's `upgrade` here.
 */
@Injectable()
export class WsWorkerServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WsWorker');
  /** This process's name in /metrics: `ws_<8 hex>`, the `<type>_<hex>` shape of every worker id. */
  readonly workerId = `ws_${randomBytes(4).toString('hex')}`;
  private readonly hub = new ConnectionHub();
  private readonly live = new Map<string, LiveConnection>();
  private readonly options: WsWorkerConfig;
  private readonly sessionCookieName: string;
  private readonly openModules: readonly string[];
  private readonly originAllowed: (origin: string | undefined, host: string | undefined) => boolean;
  private wss: WebSocketServer | null = null;
  private httpServer: Server | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private unsubscribeRevocations: (() => Promise<void>) | null = null;
  /** Every connection from its handshake until it closes, by client address, by user and anonymous. */
  private readonly slots: ConnectionSlots;
  private expressApp: Application | null = null;
  private readonly upgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    void this.handleUpgrade(request, socket, head);
  readonly stats: WsWorkerStats = {
    connections: 0,
    connectionsTotal: 0,
    messagesReceived: 0,
    handlerErrors: 0,
    refused: {
      unauthorized: 0,
      forbidden: 0,
      overloaded: 0,
      not_found: 0,
      origin: 0,
      per_address: 0,
      per_user: 0,
      anonymous_share: 0,
    },
  };

  constructor(
    @Inject(WS_WORKER_CONFIG) wsWorker: WsWorkerConfig,
    @Inject(HTTP_WORKER_CONFIG) httpWorker: HttpWorkerConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly functions: FunctionRegistryService,
    private readonly app: AppCoreService,
    private readonly channels: WsChannels,
    @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker,
    private readonly authenticator: Authenticator,
    @Optional() sessions?: SessionCookies,
  ) {
    this.options = wsWorker;
    this.openModules = httpWorker.openModules;
    this.originAllowed = websocketOriginRule(corsOriginRule(httpWorker.corsOrigins));
    this.slots = new ConnectionSlots({
      total: this.options.maxConnections,
      perAddress: this.options.maxConnectionsPerIp,
      perUser: this.options.maxConnectionsPerUser,
      anonymous: Math.floor((this.options.maxConnections * this.options.anonymousMaxPercent) / 100),
    });
    this.sessionCookieName = sessions?.cookieName ?? 'tb_session';
  }

  get brokerDriver(): string {
    return this.broker.driver;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.options.maxMessageBytes,
      perMessageDeflate: false,
    });
    this.httpServer = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.expressApp = this.adapterHost.httpAdapter.getInstance<Application>();
    this.httpServer.on('upgrade', this.upgradeListener);
    this.channels.attachLocal({
      holds: (connId) => this.hub.holds(connId),
      apply: (command) => this.hub.apply(command),
    });
    this.unsubscribe = await this.broker.subscribe(WS_BROKER_TOPIC, (payload) => {
      const command = readWsCommand(payload);
      if (command) this.hub.apply(command);
    });
    this.unsubscribeRevocations = await this.broker.subscribe(AUTH_REVOKED_TOPIC, (payload) => {
      const revoked = readRevokedCredential(payload);
      if (revoked) this.endConnectionsOf(revoked);
    });
    this.pingTimer = setInterval(() => this.pingAll(), this.options.pingIntervalSeconds * 1000);
    this.pingTimer.unref();
  }

  /**
   * Closes every connection with 1001 (going away) so clients reconnect to another worker; before the
   * HTTP server closes, which would cut them without a close frame.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.httpServer?.off('upgrade', this.upgradeListener);
    this.channels.attachLocal(null);
    await this.unsubscribe?.().catch(() => undefined);
    await this.unsubscribeRevocations?.().catch(() => undefined);
    for (const connection of this.live.values()) connection.socket.close(WS_CLOSE.GOING_AWAY, 'Server shutting down');
    // The server closes once every client answered the close frame; one that does not is cut off.
    await new Promise<void>((resolve) => {
      const deadline = setTimeout(resolve, CLOSE_HANDSHAKE_TIMEOUT_MS);
      if (!this.wss) return resolve();
      this.wss.close(() => {
        clearTimeout(deadline);
        resolve();
      });
    });
    for (const connection of this.live.values()) connection.socket.terminate();
  }

  private async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const origin = request.headers.origin;
    if (!this.originAllowed(origin, request.headers.host)) {
      // Before the handshake: a page of another site learns nothing, not even whether the handler exists.
      this.stats.refused.origin += 1;
      rejectUpgrade(
        socket,
        403,
        `Origin ${origin} may not open WebSocket connections here (allowed: this site, CORS_ORIGINS, localhost, Tauri)`,
      );
      return;
    }
    const url = new URL(request.url ?? '/', 'http://worker');
    const routed = resolveWsRoute(url.pathname, this.functions);
    if (!('route' in routed)) {
      this.stats.refused.not_found += 1;
      rejectUpgrade(socket, routed.status, routed.message);
      return;
    }
    const { route } = routed;
    // Counted before the handshake, so concurrent upgrades cannot all slip under a limit; the client address is
    // the one Express gives this app's requests (a trusted proxy's X-Forwarded-For, else the peer).
    const slot = this.slots.reserve(addressKey(clientAddressOf(request, this.expressApp!)));
    if (typeof slot === 'string') return this.refuseSlot(request, socket, head, slot);
    // Held until the socket closes: when the connection ends, or when the handshake is abandoned (the client may
    // go away while its credential is checked, and then the handshake callback never runs).
    const release = slot.release;
    socket.once('close', release);
    let principal: Principal | null;
    try {
      principal = await this.authenticator.authenticate(credentialRequestOf(request, url, this.sessionCookieName));
    } catch (error) {
      release();
      if (!(error instanceof PlatformError) || error.code !== 'UNAUTHORIZED') {
        // The credential could not be checked (a store is down): not the client's fault.
        this.logger.error(`authentication failed on ${url.pathname}: ${(error as Error)?.message}`);
        return this.acceptThenClose(request, socket, head, WS_CLOSE.INTERNAL_ERROR, 'Internal error');
      }
      this.stats.refused.unauthorized += 1;
      return this.acceptThenClose(request, socket, head, WS_CLOSE.POLICY_VIOLATION, 'Unauthorized');
    }
    const session = wsSessionOf(principal);
    // The HTTP workers' rule, so a handler and a function of one module are guarded alike: an open handler
    // (module in OPEN_MODULES, or a name starting with `open`) needs no session, any other needs one, and
    // the level holds either way.
    const access = decideAccess({
      module: route.module,
      functionName: route.handler,
      required: route.entry.options.level,
      callerLevel: session.authenticated ? session.level : null,
      openModules: this.openModules,
    });
    if (!access.allowed) {
      release();
      const anonymous = access.status === 401;
      this.stats.refused[anonymous ? 'unauthorized' : 'forbidden'] += 1;
      return this.acceptThenClose(
        request,
        socket,
        head,
        WS_CLOSE.POLICY_VIOLATION,
        anonymous ? 'Unauthorized' : 'Forbidden: insufficient access level',
      );
    }
    const refusal = slot.assign(session.authenticated ? session.user_id : null);
    if (refusal) {
      release();
      return this.refuseSlot(request, socket, head, refusal);
    }
    this.wss!.handleUpgrade(request, socket, head, (ws) => this.open(ws, route, url.pathname, session, principal));
  }

  /**
   * A connection over a limit is accepted and closed at once, because a browser reads the close code and reason
   * but never the status of a refused handshake: 1008 when this client (its address or its user) holds as many as
   * one may, 1013 (try again later) when the worker is full or only the slots kept for signed-in users are left.
   */
  private refuseSlot(request: IncomingMessage, socket: Duplex, head: Buffer, refusal: SlotRefusal): void {
    const answers: Record<SlotRefusal, { code: number; reason: string; counter: keyof WsWorkerStats['refused'] }> = {
      overloaded: { code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'Server overloaded', counter: 'overloaded' },
      address: {
        code: WS_CLOSE.POLICY_VIOLATION,
        reason: `Too many connections from this address (limit ${this.options.maxConnectionsPerIp})`,
        counter: 'per_address',
      },
      user: {
        code: WS_CLOSE.POLICY_VIOLATION,
        reason: `Too many connections for this user (limit ${this.options.maxConnectionsPerUser})`,
        counter: 'per_user',
      },
      anonymous: {
        code: WS_CLOSE.TRY_AGAIN_LATER,
        reason: 'Server busy: the remaining connections are kept for signed-in users',
        counter: 'anonymous_share',
      },
    };
    const { code, reason, counter } = answers[refusal];
    this.stats.refused[counter] += 1;
    this.acceptThenClose(request, socket, head, code, reason);
  }

  /** A close code needs a WebSocket: complete the handshake, then close with the code and reason. */
  private acceptThenClose(request: IncomingMessage, socket: Duplex, head: Buffer, code: number, reason: string): void {
    this.wss!.handleUpgrade(request, socket, head, (ws) => {
      ws.close(code, reason);
      // A peer that never answers the close frame is cut off.
      setTimeout(() => ws.terminate(), CLOSE_HANDSHAKE_TIMEOUT_MS).unref();
    });
  }

  /**
   * A logout (or refresh-token reuse, or a level change for cookie sessions) on any worker ends the
   * connections opened with what it revoked, here with 4001: a connection never outlives its session.
   */
  private endConnectionsOf(revoked: RevokedCredential): void {
    for (const connection of this.live.values()) {
      const credential = connection.credential;
      if (!credential) continue;
      const ended =
        (revoked.kind === 'token' && credential.tokenId === revoked.id) ||
        (revoked.kind === 'session' && credential.sessionId === revoked.id) ||
        (revoked.kind === 'login' && loginIdOf(credential) === revoked.id) ||
        (revoked.kind === 'user' && credential.sessionId !== undefined && credential.platformUserId === revoked.id);
      if (ended) connection.socket.close(WS_CLOSE.SESSION_ENDED, 'Session ended');
    }
  }

  private open(socket: WebSocket, route: WsRoute, path: string, session: WsSession, principal: Principal | null): void {
    const id = randomUUID();
    const caller: Caller = { level: session.level, userId: session.user_id, transport: 'ws' };
    const channels = this.channels;
    const context: WsConnectionContext = {
      conn_id: id,
      path,
      handler: route.key,
      session,
      caller,
      send: (data) => channels.send(id, data),
      join: (channel) => channels.join(id, channel),
      leave: (channel) => channels.leave(id, channel),
      broadcast: (channel, data, options) => channels.broadcast(channel, data, options),
      close: (code = WS_CLOSE.NORMAL, reason = '') => channels.close(id, code, reason),
      channels,
      app: this.app,
    };
    const connection: LiveConnection = {
      id,
      socket,
      route,
      context,
      alive: true,
      queue: Promise.resolve(),
      queued: 0,
      credential: principal,
    };
    this.live.set(id, connection);
    this.hub.add({
      id,
      send: (text) => {
        if (socket.readyState === WebSocket.OPEN) socket.send(text);
      },
      close: (code, reason) => socket.close(code, reason),
    });
    this.stats.connections = this.hub.size;
    this.stats.connectionsTotal += 1;

    socket.on('pong', () => (connection.alive = true));
    socket.on('error', (error) => this.logger.debug?.(`connection ${id}: ${error.message}`));
    socket.on('message', (data, isBinary) => this.onMessage(connection, data, isBinary));
    socket.on('close', (code, reason) => {
      this.live.delete(id);
      this.hub.remove(id);
      this.stats.connections = this.hub.size;
      this.enqueue(connection, 'on_disconnect', [{ code, reason: reason.toString() }]);
    });

    socket.send(JSON.stringify({ type: 'connected', conn_id: id }));
    this.enqueue(connection, 'on_connect', []);
  }

  private onMessage(connection: LiveConnection, data: RawData, isBinary: boolean): void {
    this.stats.messagesReceived += 1;
    const message = isBinary ? toBuffer(data) : parseFrame(toBuffer(data).toString('utf8'));
    this.enqueue(connection, 'on_message', [message]);
  }

  /**
   * Handler calls of one connection run in arrival order (on_connect first, on_disconnect last). A client
   * that sends faster than its handler answers is not read further until the backlog shrinks.
   */
  private enqueue(connection: LiveConnection, name: 'on_connect' | 'on_message' | 'on_disconnect', args: unknown[]) {
    connection.queued += 1;
    if (connection.queued === MAX_QUEUED_MESSAGES) connection.socket.pause();
    connection.queue = connection.queue.then(async () => {
      await this.callHandler(connection, name, args);
      connection.queued -= 1;
      if (connection.queued === MAX_QUEUED_MESSAGES - 1) connection.socket.resume();
    });
  }

  /** Runs a handler as the connection's caller; a value it returns is sent back to the connection. */
  private async callHandler(
    connection: LiveConnection,
    name: 'on_connect' | 'on_message' | 'on_disconnect',
    args: unknown[],
  ): Promise<void> {
    const handler = connection.route.handlers[name];
    if (!handler) return;
    try {
      const reply = await runAsCaller(connection.context.caller, () => handler(connection.context, ...args));
      if (reply === undefined || name === 'on_disconnect') return;
      this.reply(connection, Result.isResult(reply) ? reply.toJSON() : reply);
    } catch (error) {
      this.stats.handlerErrors += 1;
      this.logger.error(
        `websocket handler ${connection.route.key} ${name} failed: ${(error as Error)?.message ?? error}`,
        (error as Error)?.stack,
      );
      if (name !== 'on_disconnect')
        this.reply(connection, { type: 'error', code: 'HANDLER_ERROR', message: `${name} failed` });
    }
  }

  private reply(connection: LiveConnection, data: unknown): void {
    if (connection.socket.readyState === WebSocket.OPEN) connection.socket.send(wsFrameText(data));
  }

  /** Drops a peer that did not answer the previous ping, then pings the rest. */
  private pingAll(): void {
    for (const connection of this.live.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }
}

const UPGRADE_ERRORS: Record<number, string> = { 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT' };

/** Answers an upgrade request with a plain HTTP error (no handshake): `{error, message}` as JSON. */
function rejectUpgrade(socket: Duplex, status: 403 | 404 | 409, message: string): void {
  const body = JSON.stringify({ error: UPGRADE_ERRORS[status], message });
  const reason = STATUS_CODES[status];
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** A JSON frame reaches the handler parsed; any other text as the string. */
function parseFrame(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[' && first !== '"') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
