/**
 * Platform access levels: -1 admin, 0 not logged in, 1 logged in, 2 trusted (higher numbers rank higher).
 * Admin is -1 for compatibility with existing clients, so it cannot be compared with `>=` directly.
 */
export { ACCESS_LEVEL } from '../../auth/principal.js';

/** The rank of a level: admin (any negative level) above every other, the rest by number. */
export function accessRank(level: number): number {
  return level < 0 ? Number.POSITIVE_INFINITY : level;
}

/** Whether a caller at `callerLevel` may call a function that needs `requiredLevel`. */
export function hasAccessLevel(callerLevel: number, requiredLevel: number): boolean {
  return accessRank(callerLevel) >= accessRank(requiredLevel);
}
