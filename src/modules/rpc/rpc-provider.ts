import type { Connection, Libp2p, Stream } from '@libp2p/interface';
import type { Caller } from '../app-core/caller.js';
import type { FunctionRunner } from '../app-core/function-runner.js';
import { Result } from '../app-core/result.js';
import { AccessPolicyStore, decide } from './access-policy.js';
import { FrameDecoder } from './framing.js';
import {
  RPC_ERROR,
  RPC_PROTOCOL,
  encodeMessage,
  errorResponse,
  parseRequest,
  successResponse,
  type RpcErrorObject,
  type RpcResponse,
} from './messages.js';
import { FrameWriter, chunkBytes } from './stream-io.js';

export interface RpcProviderLogger {
  log(message: string): void;
  warn(message: string): void;
}

export interface RpcProviderOptions {
  /** The application core the calls run in. */
  runner: Pick<FunctionRunner, 'runAny'>;
  policy: AccessPolicyStore;
  /** Largest request read and response written, in bytes (default 4 MiB). */
  maxMessageBytes: number;
  /** Calls running at once over all peers; more wait for a slot (default 64). */
  maxConcurrentCalls: number;
  /**
   * Calls one stream may have unanswered (running or waiting for a slot); past it the provider stops
   * reading that stream until one is answered, so a flooding peer is slowed by stream backpressure
   * instead of growing the queue (default 4 × maxConcurrentCalls).
   */
  maxInFlightPerStream?: number;
  /** A call not finished after this long is answered 408 (its wait for a slot included). */
  callTimeoutMs: number;
  /** Put the function's error text into `details` of 500 answers (DEBUG). */
  debug: boolean;
  logger?: RpcProviderLogger;
}

export interface RpcProviderStats {
  calls: number;
  running: number;
  waiting: number;
  errors: Record<number, number>;
}

/** A counting semaphore: at most `limit` holders, the rest wait in arrival order. */
class Slots {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get running(): number {
    return this.used;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  acquire(): Promise<void> {
    if (this.used < this.limit) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used--;
  }
}

class CallTimeout extends Error {}

/**
 * The provider side of `/toolbox/rpc/1.0.0`: reads length-prefixed requests from each inbound stream,
 * decides each against the access policy by the remote peer id (authenticated by Noise), runs allowed calls
 * through the application core's `runAny` as caller `{level: policy level, userId: null, transport: 'rpc'}`,
 * concurrently up to the bound, and answers each with the request's `call_id` as soon as it is done (so
 * answers may come out of order). A malformed message is answered 400 and the stream stays usable.
 */
export class RpcProvider {
  private readonly slots: Slots;
  private readonly counters = { calls: 0, errors: {} as Record<number, number> };

  constructor(private readonly options: RpcProviderOptions) {
    this.slots = new Slots(options.maxConcurrentCalls);
  }

  async attach(node: Libp2p): Promise<void> {
    await node.handle(RPC_PROTOCOL, (stream: Stream, connection: Connection) => this.serve(stream, connection), {
      runOnLimitedConnection: true,
      maxInboundStreams: 64,
    });
  }

  stats(): RpcProviderStats {
    return {
      calls: this.counters.calls,
      running: this.slots.running,
      waiting: this.slots.waiting,
      errors: { ...this.counters.errors },
    };
  }

  private async serve(stream: Stream, connection: Connection): Promise<void> {
    const peerId = connection.remotePeer.toString();
    const writer = new FrameWriter(stream);
    const decoder = new FrameDecoder(this.options.maxMessageBytes);
    const inFlightLimit = this.options.maxInFlightPerStream ?? this.options.maxConcurrentCalls * 4;
    let inFlight = 0;
    let resumeReading: (() => void) | undefined;
    const send = (response: RpcResponse) => {
      const { body, code } = this.encode(response);
      if (code !== null) this.counters.errors[code] = (this.counters.errors[code] ?? 0) + 1;
      return writer.write(body);
    };
    try {
      for await (const chunk of stream) {
        for (const event of decoder.push(chunkBytes(chunk))) {
          if (event.kind === 'frame') {
            const parsed = parseRequest(event.body);
            if (!parsed.ok) void send(errorResponse(parsed.callId, parsed.error));
            else {
              inFlight++;
              void this.run(peerId, parsed.request)
                .then(send)
                .finally(() => {
                  inFlight--;
                  resumeReading?.();
                });
              while (inFlight >= inFlightLimit) await new Promise<void>((resume) => (resumeReading = resume));
              resumeReading = undefined;
            }
          } else if (event.kind === 'oversized') {
            void send(
              errorResponse(event.callId, {
                code: RPC_ERROR.TOO_LARGE,
                message: `request of ${event.length} bytes exceeds the maximum message size of ${this.options.maxMessageBytes} bytes`,
              }),
            );
          } else {
            await send(
              errorResponse(null, { code: RPC_ERROR.BAD_REQUEST, message: `malformed stream: ${event.reason}` }),
            );
            await stream.close().catch(() => stream.abort(new Error(event.reason)));
            return;
          }
        }
      }
      // The consumer closed its side: answer what is still running, then close ours.
      while (inFlight > 0) await new Promise<void>((resume) => (resumeReading = resume));
      await writer.write(undefined);
      await stream.close().catch(() => undefined);
    } catch (error) {
      this.options.logger?.warn(`rpc stream from ${peerId} failed: ${(error as Error).message}`);
    }
  }

  /** The bytes of an answer; one JSON cannot carry becomes a 500, one over the size limit a 413. */
  private encode(response: RpcResponse): { body: Uint8Array; code: number | null } {
    let answer = response;
    let body: Uint8Array;
    try {
      body = encodeMessage(answer);
    } catch (error) {
      answer = errorResponse(response.call_id, {
        code: RPC_ERROR.INTERNAL,
        message: `the result is not JSON-serializable: ${(error as Error).message}`,
      });
      body = encodeMessage(answer);
    }
    if (body.length > this.options.maxMessageBytes) {
      answer = errorResponse(response.call_id, {
        code: RPC_ERROR.TOO_LARGE,
        message: `response of ${body.length} bytes exceeds the maximum message size of ${this.options.maxMessageBytes} bytes`,
      });
      body = encodeMessage(answer);
    }
    return { body, code: answer.error?.code ?? null };
  }

  private async run(
    peerId: string,
    request: { call_id: string; module: string; function: string; args: unknown[]; kwargs: Record<string, unknown> },
  ): Promise<RpcResponse> {
    this.counters.calls++;
    const key = `${request.module}.${request.function}`;
    const decision = decide(await this.options.policy.current(), peerId, key);
    if (!decision.allowed)
      return errorResponse(request.call_id, {
        code: RPC_ERROR.FORBIDDEN,
        message: `peer ${peerId} may not call ${key}`,
      });
    const caller: Caller = { level: decision.level, userId: null, transport: 'rpc' };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CallTimeout()), this.options.callTimeoutMs);
    });
    let holdsSlot = false;
    const work = (async () => {
      await this.slots.acquire();
      holdsSlot = true;
      try {
        return await this.options.runner.runAny(key, {
          args: request.args,
          kwargs: request.kwargs,
          caller,
          getResults: true,
        });
      } finally {
        holdsSlot = false;
        this.slots.release();
      }
    })();
    try {
      const outcome = await Promise.race([work, deadline]);
      return this.answer(request.call_id, key, outcome);
    } catch (error) {
      if (error instanceof CallTimeout) {
        // The function keeps its slot until it really ends; a slot still waited for is given up with it.
        void work.catch(() => undefined);
        if (!holdsSlot) this.options.logger?.warn(`rpc ${key} from ${peerId} timed out waiting for a free slot`);
        return errorResponse(request.call_id, {
          code: RPC_ERROR.TIMEOUT,
          message: `${key} did not finish within ${this.options.callTimeoutMs / 1000} s`,
        });
      }
      return this.internal(request.call_id, key, (error as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  private answer(callId: string, key: string, outcome: unknown): RpcResponse {
    if (!(outcome instanceof Result)) return successResponse(callId, outcome);
    if (!outcome.isError()) return successResponse(callId, outcome.get() ?? null);
    const code = outcome.info.exec_code;
    if (outcome.error === 'InternalError' && code === -2) return this.internal(callId, key, outcome.info.help_text);
    const error: RpcErrorObject = { code, message: outcome.info.help_text };
    const data = outcome.result.data;
    if (this.options.debug && data !== null && data !== undefined) error.details = JSON.stringify(data);
    return errorResponse(callId, error);
  }

  private internal(callId: string, key: string, text: string): RpcResponse {
    const error: RpcErrorObject = { code: RPC_ERROR.INTERNAL, message: `${key} failed` };
    if (this.options.debug) error.details = text;
    return errorResponse(callId, error);
  }
}
