import { PlatformError } from '../common/errors.js';
import type { Environment } from '../config/config.js';

/**
 * Where a command writes and which environment it reads. The `tb` entry passes the process's own;
 * tests pass a sink to run commands in process and read what they printed.
 */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  env: Environment;
}

export function processIo(): CommandIo {
  return { out: (text) => console.log(text), err: (text) => console.error(text), env: process.env };
}

/** Runs a command body; a domain error (registry refusal, bad manifest…) is printed as one line and exits 1. */
export async function reportingDomainErrors(io: CommandIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof PlatformError) {
      io.err(`tb: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
