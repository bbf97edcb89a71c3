import type { Architecture, Platform } from './artifact-vocabulary.js';

export interface BuildTarget {
  platform: Platform;
  architecture: Architecture;
}

export interface BuildRequest {
  platform?: Platform;
  architecture?: Architecture;
}

export type BuildChoice<T> = { kind: 'found'; build: T } | { kind: 'ambiguous'; candidates: T[] } | { kind: 'none' };

/**
 * How well a build serves a requested value: the exact value beats the universal `all`; anything else
 * does not serve it. Nothing requested: a universal build is preferred, any other still serves.
 */
function fit(requested: string | undefined, offered: string): number {
  if (requested === undefined) return offered === 'all' ? 1 : 0;
  if (offered === requested) return 2;
  return offered === 'all' ? 1 : -1;
}

/**
 * Picks the build of one version for a platform and architecture: exact matches preferred over `all`,
 * the platform weighing more than the architecture. Two equally good candidates are ambiguous (the
 * caller has to say more), never an arbitrary pick.
 */
export function selectBuild<T extends BuildTarget>(builds: readonly T[], request: BuildRequest): BuildChoice<T> {
  let best: T[] = [];
  let bestScore = -1;
  for (const build of builds) {
    const platformFit = fit(request.platform, build.platform);
    const architectureFit = fit(request.architecture, build.architecture);
    if (platformFit < 0 || architectureFit < 0) continue;
    const score = platformFit * 3 + architectureFit;
    if (score > bestScore) {
      best = [build];
      bestScore = score;
    } else if (score === bestScore) {
      best.push(build);
    }
  }
  if (best.length === 0) return { kind: 'none' };
  if (best.length > 1) return { kind: 'ambiguous', candidates: best };
  return { kind: 'found', build: best[0] };
}

/**
 * The latest build for a platform: versions are tried from the highest down, and the first one with a
 * matching build wins (a newer version without a build for this platform does not hide an older one).
 */
export function selectLatestBuild<V, T extends BuildTarget>(
  versionsHighestFirst: readonly V[],
  buildsOf: (version: V) => readonly T[],
  request: BuildRequest,
): { version: V; choice: Exclude<BuildChoice<T>, { kind: 'none' }> } | null {
  for (const version of versionsHighestFirst) {
    const choice = selectBuild(buildsOf(version), request);
    if (choice.kind !== 'none') return { version, choice };
  }
  return null;
}
