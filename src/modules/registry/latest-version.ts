import semver from 'semver';

export interface VersionCandidate {
  version: string;
  yanked: boolean;
}

/**
 * latest_version: the highest non-prerelease non-yanked version, else the highest non-yanked one,
 * else the highest of all (so a package whose every version is yanked still names one).
 */
export function pickLatestVersion(versions: VersionCandidate[]): string | null {
  const highest = (candidates: VersionCandidate[]) =>
    candidates.map((candidate) => candidate.version).sort((a, b) => semver.rcompare(a, b))[0] ?? null;
  return (
    highest(versions.filter((v) => !v.yanked && semver.prerelease(v.version) === null)) ??
    highest(versions.filter((v) => !v.yanked)) ??
    highest(versions)
  );
}
