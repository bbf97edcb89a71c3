import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of two secrets of any length (both sides hashed first, so lengths leak nothing). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Constant-time comparison of two SHA-256 hex digests (stored key hashes). */
export function sameHash(left: string, right: string): boolean {
  const a = Buffer.from(left, 'hex');
  const b = Buffer.from(right, 'hex');
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}
