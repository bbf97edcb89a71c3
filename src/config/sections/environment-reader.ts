import { availableParallelism } from 'node:os';

/** The variables a configuration is read from (`process.env` in production, a plain object in tests). */
export type Environment = Record<string, string | undefined>;

/** Every problem of every section, in one error: start-up fails once, listing all of them. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export const MiB = 1024 * 1024;

/** Where a service listens. */
export interface ListenConfig {
  host: string;
  port: number;
}

/** A pool of worker processes on consecutive ports from `basePort`. */
export interface WorkerPoolConfig {
  host: string;
  basePort: number;
  count: number;
}

/**
 * Reads typed values from the environment. A bad value is recorded in `problems` and the default is used, so
 * every section is read to the end and loadConfig can report every problem at once.
 */
export class EnvironmentReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Environment) {}

  string(name: string): string | null {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? null : value.trim();
  }

  integer(name: string, fallback: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  number(name: string, fallback: number, { min = 0 } = {}): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) {
      this.problems.push(`${name} must be a number of at least ${min} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  /** A size in bytes: a whole number, or one with a unit (`512kb`, `8mb`, `1gb`; 1024-based, as body-parser reads them). */
  size(name: string, fallback: number): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw);
    const value = match
      ? Number(match[1]) * 1024 ** ['b', 'kb', 'mb', 'gb'].indexOf((match[2] ?? 'b').toLowerCase())
      : 0;
    if (!match || value < 1 || !Number.isSafeInteger(value)) {
      this.problems.push(`${name} must be a size in bytes, or with a unit as 512kb, 8mb (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name);
    if (raw === null) return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  workers(name: string): number {
    const raw = this.string(name);
    if (raw === null) return 1;
    if (raw === 'auto') return availableParallelism();
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 64) {
      this.problems.push(`${name} must be a whole number from 1 to 64, or "auto" (got "${raw}")`);
      return 1;
    }
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, { min: 0, max: 65535 });
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === null) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  /** `<PREFIX>_HOST`, `<PREFIX>_PORT` (the first port) and `<PREFIX>S` (how many). */
  workerPool(prefix: string, basePort: number, count: number): WorkerPoolConfig {
    return {
      host: this.string(`${prefix}_HOST`) ?? '127.0.0.1',
      basePort: this.port(`${prefix}_PORT`, basePort),
      count: this.integer(`${prefix}S`, count, { min: 1, max: 64 }),
    };
  }

  list(name: string): string[] {
    const raw = this.string(name);
    return raw === null
      ? []
      : raw
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean);
  }

  /** A comma-separated list of origins (`scheme://host[:port]`, trailing slashes dropped) or `*`. */
  originList(name: string): string[] {
    const origins = this.list(name).map((origin) => origin.replace(/\/+$/, ''));
    for (const origin of origins) {
      if (origin !== '*' && !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(origin))
        this.problems.push(`${name} entries must be origins like https://app.example.com (got "${origin}")`);
    }
    return origins;
  }

  /** An http(s) URL setting, or a problem reported with the others. */
  httpUrl(name: string, fallback: string): string {
    const value = this.string(name) ?? fallback;
    if (!/^https?:\/\/[^\s]+$/i.test(value)) this.problems.push(`${name} must be an http(s) URL (got "${value}")`);
    return value;
  }

  /** A base URL setting without its trailing slashes, or null when unset. */
  baseUrl(name: string): string | null {
    return this.string(name)?.replace(/\/+$/, '') ?? null;
  }
}

/** Hides the password of a URL so configuration errors never print secrets. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:***@');
}
