import { Result } from './result.js';

export type RemoteHttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RunHttpOptions {
  baseUrl: string;
  /** Per-request budget (default 30 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

/**
 * Calls `{baseUrl}/api/{module}/{function}` on a platform HTTP worker and returns a Result; never throws.
 * GET sends kwargs as the query string (strings as they are, other values as JSON), other methods send
 * kwargs as a JSON body. Positional arguments, when given, travel as `args_` (a JSON array).
 * A reply in the Result wire shape is rebuilt with `Result.fromWire`, other JSON becomes `Result.json`
 * and text `Result.text`; a non-2xx status or a transport failure is an InternalError whose data
 * carries `status` and `body` (exec_code is the HTTP status, or -2 when no reply arrived).
 */
export async function runHttp(
  moduleName: string,
  functionName: string,
  method: RemoteHttpMethod = 'GET',
  args: readonly unknown[] = [],
  kwargs: Record<string, unknown> = {},
  options: RunHttpOptions,
): Promise<Result> {
  const fetchFunction = options.fetch ?? fetch;
  const url = new URL(
    `${options.baseUrl.replace(/\/+$/, '')}/api/${encodeURIComponent(moduleName)}/${encodeURIComponent(functionName)}`,
  );
  const init: RequestInit = { method, headers: { accept: 'application/json', ...options.headers } };
  if (method === 'GET') {
    for (const [name, value] of Object.entries(kwargs)) {
      if (value !== undefined) url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    if (args.length > 0) url.searchParams.set('args_', JSON.stringify(args));
  } else {
    init.headers = { ...(init.headers as Record<string, string>), 'content-type': 'application/json' };
    init.body = JSON.stringify(args.length > 0 ? { ...kwargs, args_: args } : kwargs);
  }
  init.signal = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  let response: Response;
  let body: string;
  try {
    response = await fetchFunction(url, init);
    body = await response.text();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return Result.defaultInternalError(`HTTP request to ${url.origin} failed: ${message}`, -2, {
      data: { status: 0, body: '' },
    });
  }
  if (response.status < 200 || response.status >= 300) {
    return Result.defaultInternalError(`HTTP ${response.status} from ${url.pathname}`, response.status, {
      data: { status: response.status, body },
    });
  }
  let decoded: unknown;
  try {
    decoded = body.length > 0 ? JSON.parse(body) : null;
  } catch {
    return Result.text(body, { dataInfo: response.headers.get('content-type') ?? '' });
  }
  return Result.isWire(decoded) ? Result.fromWire(decoded) : Result.json(decoded);
}
