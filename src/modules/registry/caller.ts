import type { CallerUser } from '../../auth/principal.js';
import type { PackageEntity } from './entities/package.entity.js';

/** The caller as the registry's rules see it: who, admin or not, and which publisher they act for. */
export interface Caller {
  user: CallerUser | null;
  isAdmin: boolean;
  publisherId: string | null;
}

export const ANONYMOUS: Caller = { user: null, isAdmin: false, publisherId: null };

export function owns(caller: Caller, pkg: Pick<PackageEntity, 'publisherId'>): boolean {
  return caller.publisherId !== null && caller.publisherId === pkg.publisherId;
}
