import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../common/errors.js';

/** node:util parseArgs with our error type, so every command reports bad flags the same way. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  { allowPositionals = true } = {},
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `1h`, `30m`, `45s`, `7d` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match) throw new UsageError(`Invalid duration "${text}" (use 30s, 15m, 1h, 7d)`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** `--port N`: a port number (0: any free port), or undefined when the flag is absent. */
export function portFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number (got "${value}")`);
  return port;
}
