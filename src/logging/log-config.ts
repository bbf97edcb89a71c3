/**
 * The log section's shape and accepted values. They live here, below both the configuration reader (which
 * validates LOG_FORMAT and LOG_LEVEL against them) and the logger (which consumes the result), so neither of
 * those two imports the other.
 */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export interface LogConfig {
  /** LOG_FORMAT: `pretty` for a person, `json` for a collector; `auto` = pretty when stdout is a terminal. */
  format: (typeof LOG_FORMATS)[number];
  /** LOG_LEVEL: `info` by default, `debug` when DEBUG is on. */
  level: LogLevelName;
}
