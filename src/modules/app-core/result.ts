/**
 * The platform's standard Result: the wire shape existing clients of the application core read.
 *
 * ```json
 * {"error": "none", "origin": null,
 *  "result": {"data_to": "native", "data_info": "", "data": 1, "data_type": "number"},
 *  "info": {"exec_code": 0, "help_text": "OK"}}
 * ```
 */
export type ResultErrorKind = 'none' | 'InputError' | 'InternalError' | 'CustomError';

export interface ResultPayload {
  data_to: string;
  data_info: string;
  data: unknown;
  data_type: string;
}

export interface ResultInfo {
  exec_code: number;
  help_text: string;
}

/** The JSON shape of a Result on the wire. */
export interface ResultWire {
  error: ResultErrorKind;
  origin: unknown;
  result: ResultPayload;
  info: ResultInfo;
}

export interface ResultOptions {
  /** Free text describing the data (file name, content type, …). */
  dataInfo?: string;
  /** Human-readable status, `OK` by default. */
  helpText?: string;
  /** Where the data is meant to go (`native`, `api`, `cli`, `remote`); `native` by default. */
  interface?: string;
  /** Where the result comes from (for example `[module, function]`). */
  origin?: unknown;
}

const NO_HTTP_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([]);

const ERROR_KINDS: ReadonlySet<string> = new Set(['none', 'InputError', 'InternalError', 'CustomError']);

/** A short type name for `ok()` results: `null`, `string`, `number`, `boolean`, `array`, `binary`, `object`. */
export function dataTypeOf(data: unknown): string {
  if (data === null || data === undefined) return 'null';
  const type = typeof data;
  if (type !== 'object') return type;
  if (Array.isArray(data)) return 'array';
  if (data instanceof Uint8Array) return 'binary';
  return 'object';
}

export class Result<T = unknown> {
  // Declared, not initialised: the constructor creates the five properties in this order with plain stores, where
  // class-field initialisers would run a separate initialiser that defines each one before the constructor sets it.
  declare error: ResultErrorKind;
  declare origin: unknown;
  declare result: ResultPayload;
  declare info: ResultInfo;
  /**
   * Headers the HTTP worker adds to the answer (`Set-Cookie` of a logout); never part of the wire Result,
   * so other transports ignore them. Add them with `withHttpHeader`: until then every Result shares one empty
   * list (most never carry a header, and each call makes a Result).
   */
  declare httpHeaders: ReadonlyArray<readonly [string, string]>;

  constructor(
    error: ResultErrorKind,
    data: T,
    dataType: string,
    execCode: number,
    helpText: string,
    options?: ResultOptions,
  ) {
    this.error = error;
    this.origin = options?.origin ?? null;
    this.result = {
      data_to: options?.interface ?? 'native',
      data_info: options?.dataInfo ?? '',
      data,
      data_type: dataType,
    };
    this.info = { exec_code: execCode, help_text: helpText };
    this.httpHeaders = NO_HTTP_HEADERS;
  }

  /** A successful result carrying `data` (exec_code 0). */
  static ok<T>(data: T = null as T, options?: ResultOptions): Result<T> {
    return new Result('none', data, dataTypeOf(data), 0, options?.helpText ?? 'OK', options);
  }

  /** A successful result whose data is JSON (an object, array or scalar). */
  static json<T>(data: T, options?: ResultOptions): Result<T> {
    return new Result('none', data, 'json', 0, options?.helpText ?? 'OK', options);
  }

  static text(text: string, options?: ResultOptions): Result<string> {
    return new Result('none', text, 'text', 0, options?.helpText ?? 'OK', options);
  }

  static html(html: string, options?: ResultOptions): Result<string> {
    return new Result('none', html, 'html', 0, options?.helpText ?? 'OK', options);
  }

  static binary(data: Uint8Array, options?: ResultOptions): Result<Uint8Array> {
    return new Result('none', data, 'binary', 0, options?.helpText ?? 'OK', options);
  }

  /** A file download: the data holds the name, the content type and the bytes. */
  static file(
    content: Uint8Array | string,
    filename: string,
    contentType = 'application/octet-stream',
    options?: ResultOptions,
  ): Result<{ filename: string; content_type: string; content: Uint8Array | string }> {
    return new Result('none', { filename, content_type: contentType, content }, 'file', 0, options?.helpText ?? 'OK', {
      dataInfo: filename,
      ...options,
    });
  }

  /** A redirect to `url` (HTTP status 302 by default). */
  static redirect(
    url: string,
    statusCode = 302,
    options?: ResultOptions,
  ): Result<{ url: string; status_code: number }> {
    return new Result(
      'none',
      { url, status_code: statusCode },
      'redirect',
      0,
      options?.helpText ?? 'Redirect',
      options,
    );
  }

  /** A stream of chunks (server-sent events by default); the transport decides how to send it. */
  static stream<T>(
    source: AsyncIterable<T> | Iterable<T>,
    contentType = 'text/event-stream',
    options?: ResultOptions,
  ): Result<AsyncIterable<T> | Iterable<T>> {
    return new Result('none', source, 'stream', 0, options?.helpText ?? 'OK', { dataInfo: contentType, ...options });
  }

  /** An error the function chose to report; `CustomError` with exec_code -1 unless told otherwise. */
  static error<T = null>(
    helpText: string,
    execCode = -1,
    options?: ResultOptions & { kind?: Exclude<ResultErrorKind, 'none'>; data?: T },
  ): Result<T> {
    const data = (options?.data ?? null) as T;
    return new Result(options?.kind ?? 'CustomError', data, dataTypeOf(data), execCode, helpText, options);
  }

  /** The caller's fault (bad input, unknown function, missing rights): `InputError`, exec_code -3 by default. */
  static defaultUserError(
    helpText = 'Invalid input',
    execCode = -3,
    options?: ResultOptions & { data?: unknown },
  ): Result {
    return Result.error(helpText, execCode, { ...options, kind: 'InputError' });
  }

  /** The platform's or the function's fault: `InternalError`, exec_code -2 by default. */
  static defaultInternalError(
    helpText = 'Internal error',
    execCode = -2,
    options?: ResultOptions & { data?: unknown },
  ): Result {
    return Result.error(helpText, execCode, { ...options, kind: 'InternalError' });
  }

  /** Whether `value` is a Result or at least has its wire shape. */
  static isResult(value: unknown): value is Result {
    return value instanceof Result;
  }

  /** Whether `value` looks like a Result on the wire (the four top-level keys with the right types). */
  static isWire(value: unknown): value is ResultWire {
    if (value === null || typeof value !== 'object') return false;
    const candidate = value as Record<string, any>;
    return (
      typeof candidate.error === 'string' &&
      ERROR_KINDS.has(candidate.error) &&
      candidate.result !== null &&
      typeof candidate.result === 'object' &&
      'data' in candidate.result &&
      candidate.info !== null &&
      typeof candidate.info === 'object' &&
      typeof candidate.info.exec_code === 'number'
    );
  }

  /** Rebuilds a Result from its wire shape; throws a TypeError when the object is not one. */
  static fromWire(wire: unknown): Result {
    if (!Result.isWire(wire)) throw new TypeError('not a Result wire object');
    const payload = wire.result;
    let data = payload.data;
    // Nested results travel as wire objects too.
    if (Result.isWire(data)) data = Result.fromWire(data);
    return new Result(
      wire.error,
      data,
      String(payload.data_type ?? dataTypeOf(data)),
      wire.info.exec_code,
      String(wire.info.help_text ?? ''),
      {
        dataInfo: String(payload.data_info ?? ''),
        interface: String(payload.data_to ?? 'native'),
        origin: wire.origin ?? null,
      },
    );
  }

  /**
   * Not an error when the kind is `none`, or the exec_code is 0 or 200 (the platform's two success codes).
   * A Result whose data is itself a Result answers for the inner one.
   */
  isError(): boolean {
    const data = this.result.data;
    if (data instanceof Result) return data.isError();
    if (this.error === 'none') return false;
    const code = this.info.exec_code;
    return code !== 0 && code !== 200;
  }

  /** The data, `data[key]` when a key is given and the data is an object, or `fallback` when absent. */
  get<V = any>(key?: string, fallback?: V): V {
    const data = this.result.data;
    if (data instanceof Result) return data.get(key, fallback);
    if (key !== undefined && key !== null) {
      if (data !== null && typeof data === 'object' && !Array.isArray(data) && key in (data as object)) {
        const value = (data as Record<string, unknown>)[key];
        return (value === undefined ? fallback : value) as V;
      }
      return fallback as V;
    }
    return (data === null || data === undefined ? fallback : data) as V;
  }

  /** Adds a header for the HTTP answer (see `httpHeaders`); returns this Result. */
  withHttpHeader(name: string, value: string): this {
    this.httpHeaders = [...this.httpHeaders, [name, value]];
    return this;
  }

  /** The wire shape; nested Results are serialised as wire objects too. */
  toJSON(): ResultWire {
    const data = this.result.data;
    return {
      error: this.error,
      origin: this.origin,
      result: {
        data_to: this.result.data_to,
        data_info: this.result.data_info,
        data: data instanceof Result ? data.toJSON() : data,
        data_type: this.result.data_type,
      },
      info: { exec_code: this.info.exec_code, help_text: this.info.help_text },
    };
  }
}
