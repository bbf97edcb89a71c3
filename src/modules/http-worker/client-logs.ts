/** One entry of `POST /api/client-logs` after validation. */
export interface ClientLogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  message: string;
  timestamp: string | null;
  source: string | null;
}

export const CLIENT_LOG_MAX_ENTRIES = 200;
export const CLIENT_LOG_MAX_MESSAGE = 2000;

const LEVELS: Record<string, ClientLogEntry['level']> = {
  error: 'error',
  fatal: 'error',
  critical: 'error',
  warn: 'warn',
  warning: 'warn',
  info: 'info',
  log: 'info',
  debug: 'debug',
  trace: 'debug',
};

function text(value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  const raw = typeof value === 'string' ? value : JSON.stringify(value);
  return raw.length > max ? `${raw.slice(0, max)}…` : raw;
}

/**
 * The entries of a client-logs body: `{logs: [...]}`, an array, or one entry; each `{level, message,
 * timestamp?, source?}` (a bare string is an info message). At most CLIENT_LOG_MAX_ENTRIES are kept,
 * messages are cut at CLIENT_LOG_MAX_MESSAGE characters, control characters are replaced (no forged lines).
 */
export function parseClientLogs(body: unknown): { entries: ClientLogEntry[]; dropped: number } | string {
  const list: unknown[] | null = Array.isArray(body)
    ? body
    : body !== null && typeof body === 'object' && Array.isArray((body as { logs?: unknown }).logs)
      ? (body as { logs: unknown[] }).logs
      : body !== null && typeof body === 'object' && ('message' in body || 'msg' in body)
        ? [body]
        : null;
  if (list === null)
    return 'Send {"logs": [{"level", "message", "timestamp"?, "source"?}, …]} (or one entry, or an array)';
  const entries: ClientLogEntry[] = [];
  for (const item of list.slice(0, CLIENT_LOG_MAX_ENTRIES)) {
    const record = typeof item === 'string' ? { message: item } : (item as Record<string, unknown> | null);
    if (record === null || typeof record !== 'object') continue;
    const message = text(record.message ?? record.msg, CLIENT_LOG_MAX_MESSAGE);
    if (message === null) continue;
    entries.push({
      level: LEVELS[String(record.level ?? 'info').toLowerCase()] ?? 'info',
      message: sanitize(message),
      timestamp: sanitize(text(record.timestamp, 64)),
      source: sanitize(text(record.source ?? record.logger ?? record.url, 200)),
    });
  }
  return { entries, dropped: list.length - entries.length };
}

function sanitize<T extends string | null>(value: T): T {
  return (value === null ? null : value.replace(/[\u0000-\u001f\u007f]+/g, ' ')) as T;
}
