import { Result } from '../app-core/result.js';

/** The stream protocol both peers speak (multistream-select id). */
export const RPC_PROTOCOL = '/toolbox/rpc/1.0.0';

/** Error codes of the response's error object (HTTP-like). */
export const RPC_ERROR = {
  /** Malformed request: bad JSON, wrong type, missing fields, `args` not an array … */
  BAD_REQUEST: 400,
  /** This peer may not call the function (access policy or the function's level). */
  FORBIDDEN: 403,
  /** Unknown module or function. */
  NOT_FOUND: 404,
  /** The provider gave up waiting for the function. */
  TIMEOUT: 408,
  /** The message exceeds the maximum message size. */
  TOO_LARGE: 413,
  /** The function threw. */
  INTERNAL: 500,
} as const;

/** exec_codes of consumer-side outcomes that never reached an answer (the protocol defines no code for them). */
export const RPC_LOCAL_CODE = {
  /** The consumer's own per-call timeout passed. */
  TIMEOUT: 408,
  /** The caller's AbortSignal fired. */
  ABORTED: 499,
  /** The peer could not be reached, or the connection was lost while the call was pending. */
  UNAVAILABLE: 503,
} as const;

/** Request message. */
export interface RpcRequest {
  type: 'request';
  call_id: string;
  module: string;
  function: string;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  details?: string;
}

/** Response message: exactly one of `result`/`error` is non-null. `call_id` is null only when the request had none. */
export interface RpcResponse {
  type: 'response';
  call_id: string | null;
  result: unknown;
  error: RpcErrorObject | null;
}

const MAX_CALL_ID_LENGTH = 200;
const NAME_PATTERN = /^[^\s.]+$/;

export type ParsedRequest =
  { ok: true; request: Required<RpcRequest> } | { ok: false; callId: string | null; error: RpcErrorObject };

function badRequest(callId: string | null, message: string): ParsedRequest {
  return { ok: false, callId, error: { code: RPC_ERROR.BAD_REQUEST, message } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Validates one request body; every problem is a 400 naming the field. */
export function parseRequest(body: Uint8Array): ParsedRequest {
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    return badRequest(null, `malformed request: not valid UTF-8 JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(message)) return badRequest(null, 'malformed request: the message must be a JSON object');
  const rawId = message.call_id;
  const callId = typeof rawId === 'string' && rawId.length > 0 && rawId.length <= MAX_CALL_ID_LENGTH ? rawId : null;
  if (message.type !== 'request') return badRequest(callId, 'malformed request: type must be "request"');
  if (callId === null)
    return badRequest(
      null,
      `malformed request: call_id must be a non-empty string of at most ${MAX_CALL_ID_LENGTH} characters`,
    );
  for (const field of ['module', 'function'] as const) {
    const value = message[field];
    if (typeof value !== 'string' || !NAME_PATTERN.test(value))
      return badRequest(callId, `malformed request: ${field} must be a non-empty name without dots or spaces`);
  }
  if (message.args !== undefined && message.args !== null && !Array.isArray(message.args))
    return badRequest(callId, 'malformed request: args must be an array');
  if (message.kwargs !== undefined && message.kwargs !== null && !isPlainObject(message.kwargs))
    return badRequest(callId, 'malformed request: kwargs must be an object');
  return {
    ok: true,
    request: {
      type: 'request',
      call_id: callId,
      module: message.module as string,
      function: message.function as string,
      args: (message.args as unknown[] | undefined) ?? [],
      kwargs: (message.kwargs as Record<string, unknown> | undefined) ?? {},
    },
  };
}

/** A response body, or undefined when it is not a well-formed response (the consumer counts and drops it). */
export function parseResponse(body: Uint8Array): RpcResponse | undefined {
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
  if (!isPlainObject(message) || message.type !== 'response') return undefined;
  if (message.call_id !== null && typeof message.call_id !== 'string') return undefined;
  const error = message.error ?? null;
  if (error !== null) {
    if (!isPlainObject(error) || typeof error.code !== 'number' || typeof error.message !== 'string') return undefined;
    if (error.details !== undefined && typeof error.details !== 'string') return undefined;
  }
  return {
    type: 'response',
    call_id: message.call_id,
    result: error === null ? (message.result ?? null) : null,
    error: error as RpcErrorObject | null,
  };
}

export function successResponse(callId: string, result: unknown): RpcResponse {
  return { type: 'response', call_id: callId, result: result ?? null, error: null };
}

export function errorResponse(callId: string | null, error: RpcErrorObject): RpcResponse {
  return { type: 'response', call_id: callId, result: null, error };
}

export function encodeMessage(message: RpcRequest | RpcResponse): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message));
}

/**
 * The application core's Result for a response: the result as `Result.ok`, an error as an InputError
 * (4xx: the caller's fault) or InternalError (5xx and the function's own codes) carrying the code as
 * exec_code, the message as help_text and the details, when given, as data.
 */
export function responseToResult(response: RpcResponse, origin: string): Result {
  if (response.error === null) return Result.ok(response.result, { origin, interface: 'remote' });
  const { code, message, details } = response.error;
  const options = { origin, interface: 'remote', data: details ?? null };
  return code >= 400 && code < 500 && code !== RPC_ERROR.TIMEOUT
    ? Result.defaultUserError(message, code, options)
    : Result.defaultInternalError(message, code, options);
}
