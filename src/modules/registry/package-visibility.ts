import { Brackets, type SelectQueryBuilder } from 'typeorm';
import type { Caller } from './caller.js';
import type { PackageEntity, Visibility } from './entities/package.entity.js';

/**
 * Why a package is being looked at:
 * - `read`: by name (detail, download, resolve, update check): public
 *   packages are readable by anyone, unlisted by any signed-in user, private only by the owner's
 *   publisher, everything by admins.
 * - `list`: enumerated (package lists, latest-version pages). Public packages and the caller's own;
 *   unlisted packages are not enumerated, and admins list like anyone else.
 * - `search`: found by words. As `list`, except unlisted packages, which are found by name only (even by their owner).
 */
export type VisibilityPurpose = 'read' | 'list' | 'search';

interface VisibilityRule {
  everything: boolean;
  /** Visible to this caller whoever publishes them. */
  visibilities: Visibility[];
  /** The caller's own packages are visible too (whatever their visibility, `never` aside). */
  ownPublisherId: string | null;
  /** Never visible for this purpose, own packages included. */
  never: Visibility[];
}

/** The one statement of who sees which package; isVisible and whereVisible are its two renderings. */
function visibilityRule(caller: Caller, purpose: VisibilityPurpose): VisibilityRule {
  const read = purpose === 'read';
  return {
    everything: read && caller.isAdmin,
    visibilities: read && caller.user ? ['public', 'unlisted'] : ['public'],
    ownPublisherId: caller.publisherId,
    never: purpose === 'search' ? ['unlisted'] : [],
  };
}

/** Whether the caller sees this package row for `purpose`. */
export function isVisible(
  caller: Caller,
  pkg: Pick<PackageEntity, 'visibility' | 'publisherId'>,
  purpose: VisibilityPurpose = 'read',
): boolean {
  const rule = visibilityRule(caller, purpose);
  if (rule.everything) return true;
  if (rule.never.includes(pkg.visibility)) return false;
  if (rule.visibilities.includes(pkg.visibility)) return true;
  return rule.ownPublisherId !== null && pkg.publisherId === rule.ownPublisherId;
}

/** Limits a query over `packages` (as `alias`) to the rows isVisible accepts. */
export function whereVisible<T extends object>(
  query: SelectQueryBuilder<T>,
  alias: string,
  caller: Caller,
  purpose: VisibilityPurpose,
): SelectQueryBuilder<T> {
  const rule = visibilityRule(caller, purpose);
  if (rule.everything) return query;
  query.andWhere(
    new Brackets((where) => {
      where.where(`${alias}.visibility = :publicVisibility`, { publicVisibility: 'public' });
      if (rule.visibilities.includes('unlisted'))
        where.orWhere(`${alias}.visibility = :unlistedVisibility`, { unlistedVisibility: 'unlisted' });
      if (rule.ownPublisherId)
        where.orWhere(`${alias}.publisher_id = :callerPublisherId`, { callerPublisherId: rule.ownPublisherId });
    }),
  );
  for (const hidden of rule.never) query.andWhere(`${alias}.visibility <> '${hidden}'`);
  return query;
}
