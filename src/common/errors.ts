/**
 * Domain errors carry a wire code; the exception filter maps the code to an HTTP status once.
 * Services throw these and never import HTTP exceptions.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  /** The model gateway: a PAYG balance is used up (402, not 429: SDKs retry 429). */
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  /** The worker manager: scaling past the pre-allocated ports the nginx upstream lists. */
  PORT_RANGE_EXHAUSTED: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  UNPROCESSABLE_ENTITY: 422,
  ZIP_REJECTED: 422,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  /** A feature that needs a backend this installation has not configured (the gateway's TTS/STT). */
  NOT_IMPLEMENTED: 501,
  /** An upstream service answered, but with an error or an answer that cannot be read (the gateway's model runtime). */
  BAD_GATEWAY: 502,
  /** The worker manager: a cluster node to join does not answer (or is no manager). */
  CLUSTER_NODE_UNREACHABLE: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  message: string;
}

export class PlatformError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldError[],
  ) {
    super(message);
    this.name = 'PlatformError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/**
 * A command or flag used wrongly (`tb` prints the message and exits 2). Here rather than in src/cli so
 * code the CLI calls (the cluster runner's `--workers` parsing) can throw it without importing the CLI.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
