import type { LoggerService } from '@nestjs/common';
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import type pinoPrettyFactory from 'pino-pretty';
import { LOG_LEVELS, type LogConfig, type LogLevelName } from './log-config.js';
import { currentRequestId } from './request-context.js';

export type LogFormat = 'pretty' | 'json';

/**
 * pino-pretty (and its colour and date helpers) is required only for a terminal: workers under the manager log
 * JSON and need not load it at start.
 */
const loadPinoPretty = (): typeof pinoPrettyFactory =>
  createRequire(import.meta.url)('pino-pretty') as typeof pinoPrettyFactory;
export { LOG_LEVELS, type LogLevelName };

/**
 * Nest's own start-up dumps (a line per module, controller and route, some sixty for the registry):
 * shown only with DEBUG.
 */
export const FRAMEWORK_DUMP_CONTEXTS: ReadonlySet<string> = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

export interface PlatformLoggerOptions {
  /** Default: pretty when `destination` (stdout) is a terminal, JSON otherwise. */
  format?: LogFormat | null;
  /** Default `info`, `debug` with `debug`. */
  level?: LogLevelName | null;
  /** DEBUG: adds Nest's module and route dumps and lowers the default level to debug. */
  debug?: boolean;
  /** Default stdout. */
  destination?: DestinationStream & { isTTY?: boolean };
}

/**
 * The platform's Nest logger on pino: one JSON object per line in production (`time`, `level`,
 * `context`, `msg`, `request_id` while a request is handled, `err` with the stack on errors), or
 * pino-pretty's readable lines in a terminal.
 */
export class PlatformLogger implements LoggerService {
  readonly pino: PinoLogger;
  private readonly debugEnabled: boolean;

  constructor(options: PlatformLoggerOptions = {}) {
    const destination = options.destination ?? (process.stdout as DestinationStream & { isTTY?: boolean });
    const format = options.format ?? (destination.isTTY ? 'pretty' : 'json');
    this.debugEnabled = options.debug ?? false;
    const stream =
      format === 'pretty'
        ? loadPinoPretty()({
            destination,
            sync: true,
            colorize: destination.isTTY === true,
            ignore: 'pid,hostname,context',
            messageFormat: '{if context}[{context}] {end}{msg}',
            translateTime: 'SYS:HH:MM:ss.l',
          })
        : destination;
    this.pino = pino(
      {
        level: options.level ?? (this.debugEnabled ? 'debug' : 'info'),
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        mixin: () => {
          const requestId = currentRequestId();
          return requestId === undefined ? {} : { request_id: requestId };
        },
      },
      stream,
    );
  }

  log(message: unknown, ...optional: unknown[]): void {
    this.write('info', message, optional);
  }

  error(message: unknown, ...optional: unknown[]): void {
    this.write('error', message, optional);
  }

  warn(message: unknown, ...optional: unknown[]): void {
    this.write('warn', message, optional);
  }

  debug(message: unknown, ...optional: unknown[]): void {
    this.write('debug', message, optional);
  }

  verbose(message: unknown, ...optional: unknown[]): void {
    this.write('trace', message, optional);
  }

  fatal(message: unknown, ...optional: unknown[]): void {
    this.write('fatal', message, optional);
  }

  /**
   * Nest calls `logger.method(message, ...params, context)`: the last string is the context; for
   * `error`, a string before it is the stack.
   */
  private write(level: LogLevelName, message: unknown, optional: unknown[]): void {
    const params = [...optional];
    const context = params.length > 0 && typeof params.at(-1) === 'string' ? (params.pop() as string) : undefined;
    if (
      !this.debugEnabled &&
      context !== undefined &&
      FRAMEWORK_DUMP_CONTEXTS.has(context) &&
      (level === 'info' || level === 'debug' || level === 'trace')
    )
      return;
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = context === undefined ? {} : { context };
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, message.message);
      return;
    }
    if (level === 'error' && typeof params[0] === 'string') fields.err = { stack: params.shift() };
    const details = params.filter((param) => param !== undefined);
    if (details.length > 0) fields.details = details;
    if (message !== null && typeof message === 'object') this.pino[level]({ ...fields, ...(message as object) });
    else this.pino[level](fields, String(message));
  }
}

/** LOG_LEVEL's accepted values, for the configuration reader. */
export function isLogLevelName(value: string): value is LogLevelName {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** The platform logger a service process uses, from the configuration's log section (LOG_FORMAT, LOG_LEVEL) and DEBUG. */
export function platformLoggerFor(log: LogConfig | undefined, debug = false): PlatformLogger {
  const format = log?.format ?? 'auto';
  return new PlatformLogger({ format: format === 'auto' ? null : format, level: log?.level, debug });
}
