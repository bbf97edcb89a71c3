import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX } from '../credentials.js';

/** `tbk_` and 64 hex characters (256 random bits): far too many to guess, so an unsalted SHA-256 is enough to store. */
const KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}[0-9a-f]{64}$`);

/** Characters of the key kept in clear for listings (`tbk_` and 8 hex characters). */
export const DISPLAYED_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('hex')}`;
}

export function isApiKeyFormat(value: string): boolean {
  return KEY_FORMAT.test(value);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two SHA-256 hex digests. */
export function sameHash(left: string, right: string): boolean {
  const a = Buffer.from(left, 'hex');
  const b = Buffer.from(right, 'hex');
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}
