import { randomUUID } from 'node:crypto';
import type { Libp2p, PeerId, Stream } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { isMultiaddr, multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { Result } from '../app-core/result.js';
import { FrameDecoder } from './framing.js';
import {
  RPC_ERROR,
  RPC_LOCAL_CODE,
  RPC_PROTOCOL,
  encodeMessage,
  parseResponse,
  responseToResult,
  type RpcRequest,
  type RpcResponse,
} from './messages.js';
import { FrameWriter, chunkBytes } from './stream-io.js';

export interface RpcCallOptions {
  args?: unknown[];
  kwargs?: Record<string, unknown>;
  /** Seconds to wait for the answer (default: the client's, 30 s). */
  timeout?: number;
  signal?: AbortSignal;
}

export interface RpcClientOptions {
  /** Default per-call timeout in milliseconds (30 s). */
  callTimeoutMs: number;
  /** Largest request sent and response read, in bytes (4 MiB). */
  maxMessageBytes: number;
}

export interface RpcClientStats {
  /** Answers whose call_id no pending call has (never asked, or answered twice). */
  unknownResponses: number;
  /** Answers that came after their call timed out or was aborted. */
  lateResponses: number;
  /** Messages on the stream that are not well-formed responses. */
  malformedResponses: number;
  pending: number;
}

/** Where to call: a peer id (already known to the node) or a multiaddr ending in `/p2p/PEER_ID`. */
export type RpcPeer = string | PeerId | Multiaddr;

interface Pending {
  resolve(result: Result): void;
  origin: string;
  /** Ends the call with a local outcome (timeout, abort, disconnect) and forgets it. */
  fail(code: number, message: string): void;
}

const FORGOTTEN_LIMIT = 10_000;
/** Backoff between dials a provider turned away: doubling from 50 ms up to 1 s, each jittered ±50 %. */
const FIRST_REDIAL_DELAY_MS = 50;
const MAX_REDIAL_DELAY_MS = 1000;

/** One stream to one provider peer, carrying any number of calls at once. */
class Session {
  readonly pending = new Map<string, Pending>();
  readonly writer: FrameWriter;
  closed = false;

  constructor(
    readonly stream: Stream,
    readonly key: string,
  ) {
    this.writer = new FrameWriter(stream);
  }
}

/**
 * The consumer side of `/toolbox/rpc/1.0.0`: `call(peer, 'module.function', {args, kwargs, timeout, signal})`
 * → the application core's Result. Calls to one peer share one stream (opened on the first call); each is
 * correlated by its `call_id`, so many are in flight at once and answered in any order. A call ends at its
 * answer, its timeout (408), its signal (499), or when the connection is lost (503, all pending calls at once);
 * an answer arriving later is dropped, as is one for a call_id nobody waits for (both counted).
 * Never throws for a remote or network failure: every outcome is a Result.
 */
export class RpcClient {
  /** Open sessions by provider peer id, and sessions being opened. */
  private readonly live = new Map<string, Session>();
  private readonly opening = new Map<string, Promise<Session>>();
  /** call_ids that ended locally, to tell late answers from unknown ones. */
  private readonly forgotten = new Set<string>();
  private readonly counters = { unknownResponses: 0, lateResponses: 0, malformedResponses: 0 };

  constructor(
    private readonly node: Libp2p,
    private readonly options: RpcClientOptions,
  ) {}

  stats(): RpcClientStats {
    let pending = 0;
    for (const session of this.live.values()) pending += session.pending.size;
    return { ...this.counters, pending };
  }

  async call(peer: RpcPeer, name: string, options: RpcCallOptions = {}): Promise<Result> {
    const origin = name;
    const match = /^([^\s.]+)\.([^\s.]+)$/.exec(name);
    if (!match) return local(RPC_ERROR.BAD_REQUEST, `"${name}" is not module.function`, origin, 'InputError');
    if (options.args !== undefined && !Array.isArray(options.args))
      return local(RPC_ERROR.BAD_REQUEST, 'args must be an array', origin, 'InputError');
    if (
      options.kwargs !== undefined &&
      (options.kwargs === null || typeof options.kwargs !== 'object' || Array.isArray(options.kwargs))
    )
      return local(RPC_ERROR.BAD_REQUEST, 'kwargs must be an object', origin, 'InputError');
    const timeoutMs = options.timeout === undefined ? this.options.callTimeoutMs : options.timeout * 1000;
    if (!(timeoutMs > 0))
      return local(RPC_ERROR.BAD_REQUEST, 'timeout must be a positive number of seconds', origin, 'InputError');
    if (options.signal?.aborted) return local(RPC_LOCAL_CODE.ABORTED, 'RPC call aborted', origin);

    const request: RpcRequest = {
      type: 'request',
      call_id: randomUUID(),
      module: match[1],
      function: match[2],
      args: options.args ?? [],
      kwargs: options.kwargs ?? {},
    };
    let body: Uint8Array;
    try {
      body = encodeMessage(request);
    } catch (error) {
      return local(
        RPC_ERROR.BAD_REQUEST,
        `arguments are not JSON-serializable: ${(error as Error).message}`,
        origin,
        'InputError',
      );
    }
    if (body.length > this.options.maxMessageBytes)
      return local(
        RPC_ERROR.TOO_LARGE,
        `request of ${body.length} bytes exceeds the maximum message size of ${this.options.maxMessageBytes} bytes`,
        origin,
        'InputError',
      );

    let target: { peerId: string; dial: PeerId | Multiaddr };
    try {
      target = normalizePeer(peer);
    } catch (error) {
      return local(RPC_ERROR.BAD_REQUEST, `bad peer address: ${(error as Error).message}`, origin, 'InputError');
    }
    const started = Date.now();
    let session: Session;
    try {
      session = await this.withDeadline(this.session(target, started + timeoutMs), timeoutMs, options.signal);
    } catch (error) {
      if (error instanceof LocalOutcome) return local(error.code, error.message, origin);
      return local(RPC_LOCAL_CODE.UNAVAILABLE, `could not reach peer: ${(error as Error).message}`, origin);
    }

    if (session.closed) return local(RPC_LOCAL_CODE.UNAVAILABLE, 'RPC call failed: connection lost', origin);
    return await new Promise<Result>((resolve) => {
      const onAbort = () => pending.fail(RPC_LOCAL_CODE.ABORTED, 'RPC call aborted');
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        session.pending.delete(request.call_id);
      };
      const pending: Pending = {
        origin,
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        fail: (code, message) => {
          cleanup();
          this.forget(request.call_id);
          resolve(local(code, message, origin));
        },
      };
      session.pending.set(request.call_id, pending);
      const timer = setTimeout(
        () => pending.fail(RPC_LOCAL_CODE.TIMEOUT, `RPC call timed out after ${timeoutMs / 1000} s`),
        Math.max(1, timeoutMs - (Date.now() - started)),
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
      void session.writer.write(body);
    });
  }

  /** Closes every session; their pending calls fail as disconnected. */
  async close(): Promise<void> {
    const sessions = [...this.live.values()];
    for (const session of sessions) {
      this.end(session, 'RPC client closed');
      await session.stream.close().catch(() => session.stream.abort(new Error('closed')));
    }
  }

  private forget(callId: string): void {
    this.forgotten.add(callId);
    if (this.forgotten.size > FORGOTTEN_LIMIT) this.forgotten.delete(this.forgotten.values().next().value!);
  }

  private async withDeadline<T>(work: Promise<T>, timeoutMs: number, signal: AbortSignal | undefined): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new LocalOutcome(RPC_LOCAL_CODE.TIMEOUT, `RPC call timed out after ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      onAbort = () => reject(new LocalOutcome(RPC_LOCAL_CODE.ABORTED, 'RPC call aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The session to a peer: the open one, the one being opened, or a new one (dialling until `deadline`). */
  private session(target: { peerId: string; dial: PeerId | Multiaddr }, deadline: number): Promise<Session> {
    const key = target.peerId;
    const live = this.live.get(key);
    if (live && !live.closed) return Promise.resolve(live);
    const existing = this.opening.get(key);
    if (existing) return existing;
    const opening = this.open(target.dial, key, deadline).finally(() => this.opening.delete(key));
    this.opening.set(key, opening);
    return opening;
  }

  private async open(dial: PeerId | Multiaddr, key: string, deadline: number): Promise<Session> {
    let delayMs = FIRST_REDIAL_DELAY_MS;
    for (;;) {
      try {
        const stream = await this.node.dialProtocol(dial, RPC_PROTOCOL, { runOnLimitedConnection: true });
        const session = new Session(stream, key);
        this.live.set(key, session);
        void this.read(session);
        return session;
      } catch (error) {
        // A provider turns away a new connection during its handshake when this address has too many
        // connections in their upgrade or opened too many this second; the call waits its turn and dials
        // again while its time lasts. Anything else (nobody listening, the wrong peer) fails at once.
        const wait = delayMs * (0.5 + Math.random());
        if (!isRefusal(error) || Date.now() + wait >= deadline) throw error;
        await new Promise((resume) => setTimeout(resume, wait));
        delayMs = Math.min(delayMs * 2, MAX_REDIAL_DELAY_MS);
      }
    }
  }

  private async read(session: Session): Promise<void> {
    const decoder = new FrameDecoder(this.options.maxMessageBytes);
    let reason = 'connection lost';
    try {
      for await (const chunk of session.stream) {
        for (const event of decoder.push(chunkBytes(chunk))) {
          if (event.kind === 'frame') this.deliver(session, parseResponse(event.body));
          else if (event.kind === 'oversized') {
            const pending = event.callId === null ? undefined : session.pending.get(event.callId);
            if (pending)
              pending.resolve(
                local(
                  RPC_ERROR.TOO_LARGE,
                  `response of ${event.length} bytes exceeds the maximum message size of ${this.options.maxMessageBytes} bytes`,
                  pending.origin,
                ),
              );
            else this.counters.malformedResponses++;
          } else {
            reason = `provider sent an unframeable stream (${event.reason})`;
            session.stream.abort(new Error(reason));
            break;
          }
        }
      }
      reason = 'provider closed the stream';
    } catch (error) {
      reason = `connection lost: ${(error as Error).message}`;
    }
    this.end(session, reason);
  }

  private deliver(session: Session, response: RpcResponse | undefined): void {
    if (response === undefined) {
      this.counters.malformedResponses++;
      return;
    }
    const pending = response.call_id === null ? undefined : session.pending.get(response.call_id);
    if (pending) {
      pending.resolve(responseToResult(response, pending.origin));
      return;
    }
    if (response.call_id !== null && this.forgotten.delete(response.call_id)) this.counters.lateResponses++;
    else this.counters.unknownResponses++;
  }

  /** Fails every pending call of a session at once and drops the session, so the next call dials again. */
  private end(session: Session, reason: string): void {
    if (session.closed) return;
    session.closed = true;
    if (this.live.get(session.key) === session) this.live.delete(session.key);
    for (const pending of [...session.pending.values()])
      pending.fail(RPC_LOCAL_CODE.UNAVAILABLE, `RPC call failed: ${reason}`);
  }
}

class LocalOutcome extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** `data_info` of the Results a call ends with when no answer came from the provider. */
export const NO_ANSWER = 'rpc: no answer from the provider';

function local(
  code: number,
  message: string,
  origin: string,
  kind: 'InputError' | 'InternalError' = 'InternalError',
): Result {
  const options = { origin, interface: 'remote', dataInfo: NO_ANSWER };
  return kind === 'InputError'
    ? Result.defaultUserError(message, code, options)
    : Result.defaultInternalError(message, code, options);
}

/**
 * Whether a failed dial is the provider turning the connection away (a reset, or a handshake it cut
 * short), as opposed to an address nobody listens on or a peer that is not who the address names.
 */
export function isRefusal(error: unknown): boolean {
  const queue: unknown[] = [error];
  for (let index = 0; index < queue.length && index < 32; index++) {
    const each = queue[index] as { name?: string; code?: string; message?: string; errors?: unknown; cause?: unknown };
    if (each === null || typeof each !== 'object') continue;
    const message = String(each.message ?? '');
    if (each.name === 'EncryptionFailedError' && !/identity key|signature|remote static/i.test(message)) return true;
    if (each.code === 'ECONNRESET' || each.code === 'EPIPE' || /\b(ECONNRESET|EPIPE)\b/.test(message)) return true;
    if (Array.isArray(each.errors)) queue.push(...(each.errors as unknown[]));
    if (each.cause !== undefined) queue.push(each.cause);
  }
  return false;
}

/** The peer id (the session key) and what to dial for a peer given as id, PeerId or multiaddr. */
export function normalizePeer(peer: RpcPeer): { peerId: string; dial: PeerId | Multiaddr } {
  if (typeof peer === 'string') {
    if (peer.startsWith('/')) return normalizePeer(multiaddr(peer));
    const peerId = peerIdFromString(peer);
    return { peerId: peerId.toString(), dial: peerId };
  }
  if (isMultiaddr(peer)) {
    // The last /p2p/ component is the peer called (a relayed address names the relay first).
    const id = peer
      .getComponents()
      .filter((component) => component.name === 'p2p')
      .pop()?.value;
    if (!id) throw new Error(`${peer.toString()} does not end in /p2p/PEER_ID`);
    return { peerId: peerIdFromString(id).toString(), dial: peer };
  }
  return { peerId: peer.toString(), dial: peer };
}
