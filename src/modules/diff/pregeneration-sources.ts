import semver from 'semver';

export interface VersionCandidate {
  id: string;
  version: string;
  yanked: boolean;
}

/**
 * The versions a new upload gets deltas from: the `count` highest non-yanked versions lower than it.
 * Prereleases are sources only when the new version is itself a prerelease: users of stable releases
 * update from stable releases, while a prerelease channel also moves from beta to beta. An older
 * upload (a backport 1.4.3 after 2.0.0) gets deltas from its own line's predecessors (1.4.2, …).
 */
export function pregenerationSources<T extends VersionCandidate>(
  versions: readonly T[],
  newVersion: string,
  count: number,
): T[] {
  if (count <= 0) return [];
  const includePrereleases = semver.prerelease(newVersion) !== null;
  return versions
    .filter((candidate) => !candidate.yanked)
    .filter((candidate) => semver.valid(candidate.version) !== null && semver.lt(candidate.version, newVersion))
    .filter((candidate) => includePrereleases || semver.prerelease(candidate.version) === null)
    .sort((left, right) => semver.rcompare(left.version, right.version))
    .slice(0, count);
}
