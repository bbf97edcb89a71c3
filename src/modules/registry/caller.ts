import type { CallerUser } from '../../auth/principal.js';
import type { PackageEntity } from './entities/package.entity.js';

/** The caller as the registry's rules see it: who, admin or not, and which publisher they act for. */
export interface Caller {
  user: CallerUser | null;
  isAdmin: boolean;
  publisherId: string | null;
}

export const ANONYMOUS: Caller = { user: null, isAdmin: false, publisherId: null };

/**
 * Seed 01 "Authentication" 3–4: public packages are readable by anyone; unlisted by any authenticated
 * user; private only by the owner's publisher (and admins).
 */
export function canRead(caller: Caller, pkg: Pick<PackageEntity, 'visibility' | 'publisherId'>): boolean {
  if (pkg.visibility === 'public') return true;
  if (caller.isAdmin) return true;
  if (pkg.visibility === 'unlisted') return caller.user !== null;
  return caller.publisherId !== null && caller.publisherId === pkg.publisherId;
}

export function owns(caller: Caller, pkg: Pick<PackageEntity, 'publisherId'>): boolean {
  return caller.publisherId !== null && caller.publisherId === pkg.publisherId;
}
