/**
 * What an API key may do: read resources, write (e.g. the documentation writer), execute
 * code, admin (key management). `admin` implies the other three, so an admin key is never refused a
 * tool a lesser key could call.
 */
export const PERMISSIONS = ['read', 'write', 'execute', 'admin'] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}

export function hasPermission(granted: readonly string[], needed: Permission): boolean {
  return granted.includes(needed) || granted.includes('admin');
}
