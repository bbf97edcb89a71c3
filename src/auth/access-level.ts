/**
 * Platform access levels: -1 admin, 0 not logged in, 1 logged in, 2 trusted. Admin is -1 for
 * compatibility with existing clients, so levels cannot be compared with `>=` directly: admin ranks
 * above every other level, the rest rank by number.
 */
export const ACCESS_LEVEL = { ADMIN: -1, NOT_LOGGED_IN: 0, LOGGED_IN: 1, TRUSTED: 2 } as const;

export type AccessLevel = (typeof ACCESS_LEVEL)[keyof typeof ACCESS_LEVEL];

const KNOWN_LEVELS: readonly number[] = Object.values(ACCESS_LEVEL);

export function isAccessLevel(value: unknown): value is AccessLevel {
  return typeof value === 'number' && KNOWN_LEVELS.includes(value);
}

/** The constant's name for messages ("LOGGED_IN"), or the number when it is none of the four. */
export function accessLevelName(level: number): string {
  return Object.entries(ACCESS_LEVEL).find(([, value]) => value === level)?.[0] ?? String(level);
}

/** The rank of a level: admin (any negative level) above every other, the rest by number. */
export function accessRank(level: number): number {
  return level < 0 ? Number.POSITIVE_INFINITY : level;
}

/** Whether a caller at `callerLevel` may use something that needs `requiredLevel`. */
export function hasAccessLevel(callerLevel: number, requiredLevel: number): boolean {
  return accessRank(callerLevel) >= accessRank(requiredLevel);
}
