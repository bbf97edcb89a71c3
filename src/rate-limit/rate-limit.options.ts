export const RATE_LIMIT_OPTIONS = Symbol('RATE_LIMIT_OPTIONS');

/** Requests per caller per hour; admins are never limited. */
export interface RateLimitOptions {
  anonPerHour: number;
  authPerHour: number;
}
