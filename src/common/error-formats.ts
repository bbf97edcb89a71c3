import type { ErrorCode, FieldError } from './errors.js';

/**
 * The wire shapes a service may choose for its error bodies. The status of an error is decided once
 * (exception.filter.ts, from ERROR_STATUS); a format only decides the body.
 * - `registry`: `{code, message, detail, request_id[, errors]}` (the default)
 * - `result`: the application core's Result envelope, as the HTTP worker answers `/api/{module}/{function}`
 * - `openai`: `{error: {message, type, param, code}}`, as OpenAI-compatible clients of the gateway expect
 * - `json-rpc`: a JSON-RPC 2.0 error response (`id` is null: the filter never knows the request's id)
 */
export const ERROR_FORMATS = ['registry', 'result', 'openai', 'json-rpc'] as const;
export type ErrorFormat = (typeof ERROR_FORMATS)[number];

/** An error as the filter understood it, before it takes a wire shape. */
export interface DescribedError {
  status: number;
  code: ErrorCode;
  message: string;
  requestId: string;
  errors?: FieldError[];
  /** The body was not valid JSON (JSON-RPC has its own code for this). */
  parseError?: boolean;
}

export function errorBody(format: ErrorFormat, error: DescribedError): object {
  switch (format) {
    case 'registry':
      return registryErrorBody(error);
    case 'result':
      return resultErrorBody(error);
    case 'openai':
      return openAiErrorBody(error);
    case 'json-rpc':
      return jsonRpcErrorBody(error);
  }
}

export interface RegistryErrorBody {
  code: ErrorCode;
  message: string;
  detail: string;
  request_id: string;
  errors?: FieldError[];
}

function registryErrorBody({ code, message, requestId, errors }: DescribedError): RegistryErrorBody {
  return { code, message, detail: message, request_id: requestId, ...(errors && errors.length > 0 ? { errors } : {}) };
}

/**
 * The Result wire shape (src/modules/app-core/result.ts) of an error: the caller's fault is an `InputError`,
 * ours an `InternalError`. exec_code is the HTTP status, as the original worker read a positive exec_code
 * as the status to answer with; help_text carries the message, data the code and request id.
 */
function resultErrorBody({ status, code, message, requestId, errors }: DescribedError): object {
  return {
    error: status >= 500 ? 'InternalError' : 'InputError',
    origin: null,
    result: {
      data_to: 'API',
      data_info: code,
      data: { code, request_id: requestId, ...(errors && errors.length > 0 ? { errors } : {}) },
      data_type: 'json',
    },
    info: { exec_code: status, help_text: message },
  };
}

/**
 * OpenAI's error `type` by status, as its API sends them (clients switch on them): a bad or missing key and an
 * unknown model are `invalid_request_error`, a per-minute request limit is `requests`; anything else of ours
 * at 5xx is a `server_error`.
 */
const OPENAI_TYPE_BY_STATUS: Record<number, string> = {
  401: 'invalid_request_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'invalid_request_error',
  429: 'requests',
};

/** OpenAI's own `code` where clients test for it; our code in lower case otherwise. */
const OPENAI_CODE: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: 'invalid_api_key',
  PAYMENT_REQUIRED: 'insufficient_quota',
  RATE_LIMITED: 'rate_limit_exceeded',
};

function openAiErrorBody({ status, code, message, errors }: DescribedError): object {
  const type = OPENAI_TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  const openAiCode = status === 404 && errors?.[0]?.field === 'model' ? 'model_not_found' : OPENAI_CODE[code];
  return { error: { message, type, param: errors?.[0]?.field ?? null, code: openAiCode ?? code.toLowerCase() } };
}

/** JSON-RPC 2.0 reserves -32700…-32600; -32000…-32099 are ours ("server error") for what it has no code for. */
const JSON_RPC_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: -32600,
  UNPROCESSABLE_ENTITY: -32602,
  ZIP_REJECTED: -32602,
  NOT_FOUND: -32601,
  INTERNAL_ERROR: -32603,
  UNAUTHORIZED: -32001,
  PAYMENT_REQUIRED: -32002,
  FORBIDDEN: -32003,
  CONFLICT: -32009,
  PORT_RANGE_EXHAUSTED: -32009,
  PAYLOAD_TOO_LARGE: -32013,
  URI_TOO_LONG: -32014,
  UNSUPPORTED_MEDIA_TYPE: -32015,
  HEADERS_TOO_LARGE: -32031,
  RANGE_NOT_SATISFIABLE: -32016,
  RATE_LIMITED: -32029,
  NOT_IMPLEMENTED: -32051,
  SERVICE_UNAVAILABLE: -32050,
  CLUSTER_NODE_UNREACHABLE: -32052,
  BAD_GATEWAY: -32053,
};

function jsonRpcErrorBody({ code, message, requestId, errors, parseError }: DescribedError): object {
  return {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: parseError ? -32700 : JSON_RPC_CODE[code],
      message,
      data: { code, request_id: requestId, ...(errors && errors.length > 0 ? { errors } : {}) },
    },
  };
}
