import { Range, SemVer, valid } from 'semver';
import type { Comparator } from 'semver';
import { PlatformError } from '../../common/errors.js';
import type { Requirement } from '../../packaging/requirement.js';
import {
  isPrereleaseRange,
  normalizeHostVersion,
  parseRequirement,
  satisfiesHost,
} from '../../packaging/requirement.js';

/** One published version as the catalog knows it. */
export interface CandidateVersion {
  version: string;
  yanked: boolean;
  yankReason?: string | null;
  /** Host (toolbox) versions this version supports, as a range; null means any. */
  toolboxVersion: string | null;
  /** Requirement strings as stored with the version (or already parsed requirements). */
  dependencies: ReadonlyArray<string | Requirement>;
  /** Opaque to the resolver and handed back on the resolved entry (checksum, storage key…). */
  payload?: unknown;
}

/** Where the resolver reads versions from; the service backs it with the database. */
export interface PackageCatalog {
  /** Every version of a package visible to the caller, in any order; undefined when unknown or invisible. */
  versions(name: string): Promise<readonly CandidateVersion[] | undefined>;
}

export interface ResolveOptions {
  /** The host (toolbox) version; versions whose `toolboxVersion` excludes it are skipped. */
  hostVersion?: string;
  /** Upper bound on search steps (package visits plus candidate tries) before giving up. */
  maxSteps?: number;
}

export interface ResolvedPackage {
  name: string;
  version: string;
  /** Requirement strings as stored with the chosen version. */
  dependencies: string[];
  payload: unknown;
}

export interface ResolutionOutcome {
  success: boolean;
  /** In resolution order (the order decisions were made); empty when the resolution failed. */
  resolved: Map<string, ResolvedPackage>;
  conflicts: string[];
  warnings: string[];
}

export const DEFAULT_MAX_STEPS = 10_000;
// A failed search can explain itself many ways; past this many lines the rest is noise.
const MAX_REPORTED_CONFLICTS = 10;
const MAX_CHAIN_HOPS = 5;

interface LoadedVersion {
  candidate: CandidateVersion;
  semver: SemVer;
  /** Parsed lazily: most versions are never tried. A string holds the parse error. */
  dependencies?: Requirement[] | string;
}

interface ParsedRange {
  releasesOnly: Range;
  withPrereleases: Range;
  namesPrerelease: boolean;
}

interface LoadedPackage {
  name: string;
  /** Highest first; versions that are not semver are left out. */
  versions: LoadedVersion[];
}

interface Decision {
  name: string;
  chosen: LoadedVersion;
  /** The decision whose dependency first named this package; undefined when requested directly. */
  parent?: Decision;
  /** Position on the decision stack: a lower index was decided earlier. */
  index: number;
}

interface Constraint {
  requirement: Requirement;
  /** Undefined for a root requirement. */
  requiredBy?: Decision;
}

/** The decisions whose change could undo a failure: conflict-directed backjumping skips all others. */
type ConflictSet = Set<string>;

class StepLimitExceeded extends Error {}

/**
 * Picks one version per package so that every requirement, transitive ones included, is met.
 *
 * Depth-first search over decisions, one package at a time in discovery order, highest
 * candidate first. Each decision is checked at once against the packages it names (forward
 * checking), so a dead end shows up where it is caused. A failure returns the set of decisions
 * that caused it; a decision outside that set cannot help, so the search jumps back past it
 * (conflict-directed backjumping), and a version that fails whatever else is decided is never
 * tried again. `maxSteps` bounds what is left of the exponential worst case.
 *
 * Known limit: a yanked version or prerelease that only a later-discovered requirement admits
 * (`x` needs `lib>=2.0.0-rc.1` after `lib` was already decided) is not reached; the conflict
 * then suggests requesting that range directly, which resolves it.
 */
export async function resolveDependencies(
  roots: readonly Requirement[],
  catalog: PackageCatalog,
  options: ResolveOptions = {},
): Promise<ResolutionOutcome> {
  const hostVersion = options.hostVersion === undefined ? undefined : normalizeHostVersion(options.hostVersion);
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const resolver = new Resolver(catalog, hostVersion, maxSteps);
  return resolver.run(roots);
}

class Resolver {
  private readonly loads = new Map<string, Promise<LoadedPackage | undefined>>();
  private readonly loaded = new Map<string, LoadedPackage | undefined>();
  /** Per package, in the order constraints arrived; a package is pending while it has constraints. */
  private readonly constraints = new Map<string, Constraint[]>();
  private readonly decisions = new Map<string, Decision>();
  private readonly conflictMessages = new Set<string>();
  /** Keyed by the normalized range string, which requirements share (no key building per test). */
  private readonly ranges = new Map<string, ParsedRange>();
  /** Versions of different packages often store the same requirement strings; parse each once. */
  private readonly parsedRequirements = new Map<string, Requirement | string>();
  private readonly hostCompatibility = new Map<string, boolean>();
  /** Versions shown to fail whatever else is decided (their own failure blamed nothing else). */
  private readonly dead = new Set<LoadedVersion>();
  private steps = 0;

  constructor(
    private readonly catalog: PackageCatalog,
    private readonly hostVersion: string | undefined,
    private readonly maxSteps: number,
  ) {}

  async run(roots: readonly Requirement[]): Promise<ResolutionOutcome> {
    for (const requirement of roots) this.addConstraint({ requirement });
    let success: boolean;
    let gaveUp = false;
    try {
      success = (await this.search()) === null;
    } catch (error) {
      if (!(error instanceof StepLimitExceeded)) throw error;
      success = false;
      gaveUp = true;
    }
    if (!success) {
      const conflicts = [...this.conflictMessages];
      if (gaveUp) {
        conflicts.unshift(`resolution gave up after ${this.maxSteps} steps; pin some versions to narrow the search`);
      }
      return { success: false, resolved: new Map(), conflicts: capConflicts(conflicts), warnings: [] };
    }
    return { success: true, resolved: this.resolvedPackages(), conflicts: [], warnings: this.warnings() };
  }

  /** Resolves every pending package; null on success, otherwise the decisions to blame. */
  private async search(): Promise<ConflictSet | null> {
    this.countStep();
    const name = this.nextPending();
    if (name === undefined) return null;
    const constraints = this.constraints.get(name)!;
    const pkg = this.loaded.has(name) ? this.loaded.get(name) : await this.load(name);
    if (!pkg) return this.unknownPackage(name, constraints);

    const { candidates, failure } = this.examine(pkg, constraints);
    if (candidates.length === 0) {
      if (failure) this.conflictMessages.add(failure);
      return this.blameFor(pkg, constraints, candidates);
    }

    const blame: ConflictSet = new Set();
    for (const chosen of candidates) {
      this.countStep();
      const decision: Decision = { name, chosen, parent: constraints[0].requiredBy, index: this.decisions.size };
      const clash = this.clashWithDecided(decision);
      if (clash) {
        // Specific to this version: the next one may get along with the earlier choice.
        for (const culprit of clash) blame.add(culprit);
        if (clash.size === 0) this.dead.add(chosen);
        continue;
      }
      this.decisions.set(name, decision);
      const added = this.addDependencies(decision);
      const failed = (await this.forwardCheck(decision)) ?? (await this.search());
      if (failed === null) return null;
      this.removeConstraints(added);
      this.decisions.delete(name);
      // Another version of this package cannot fix a failure it played no part in.
      if (!failed.has(name)) return failed;
      failed.delete(name);
      if (failed.size === 0) this.dead.add(chosen);
      for (const culprit of failed) blame.add(culprit);
    }
    for (const culprit of this.blameFor(pkg, constraints, candidates)) blame.add(culprit);
    blame.delete(name);
    return blame;
  }

  /** Checks each package the new decision names; the blame for the first one left without candidates. */
  private async forwardCheck(decision: Decision): Promise<ConflictSet | undefined> {
    const checked = new Set<string>();
    for (const requirement of decision.chosen.dependencies as Requirement[]) {
      const name = requirement.name;
      if (checked.has(name) || this.decisions.has(name)) continue;
      checked.add(name);
      const constraints = this.constraints.get(name)!;
      const pkg = this.loaded.has(name) ? this.loaded.get(name) : await this.load(name);
      if (!pkg) return this.unknownPackage(name, constraints);
      const { candidates, failure } = this.examine(pkg, constraints);
      if (candidates.length > 0) continue;
      if (failure) this.conflictMessages.add(failure);
      return this.blameFor(pkg, constraints, candidates);
    }
    return undefined;
  }

  private unknownPackage(name: string, constraints: readonly Constraint[]): ConflictSet {
    this.conflictMessages.add(`unknown package ${name} (${requiredByPhrase(constraints[0])})`);
    return requiredness(constraints);
  }

  private countStep(): void {
    this.steps += 1;
    if (this.steps > this.maxSteps) throw new StepLimitExceeded();
  }

  private nextPending(): string | undefined {
    for (const name of this.constraints.keys()) if (!this.decisions.has(name)) return name;
    return undefined;
  }

  private addConstraint(constraint: Constraint): void {
    const name = constraint.requirement.name;
    const list = this.constraints.get(name);
    if (list) list.push(constraint);
    else this.constraints.set(name, [constraint]);
    this.prefetch(name);
  }

  private addDependencies(decision: Decision): string[] {
    const added: string[] = [];
    for (const requirement of decision.chosen.dependencies as Requirement[]) {
      this.addConstraint({ requirement, requiredBy: decision });
      added.push(requirement.name);
    }
    return added;
  }

  private removeConstraints(names: string[]): void {
    for (let index = names.length - 1; index >= 0; index -= 1) {
      const list = this.constraints.get(names[index])!;
      list.pop();
      if (list.length === 0) this.constraints.delete(names[index]);
    }
  }

  /** Starts loading as soon as a package is named, so catalog round trips overlap with the search. */
  private prefetch(name: string): void {
    if (this.loads.has(name)) return;
    const load = this.catalog.versions(name).then((versions) => {
      const pkg = versions === undefined ? undefined : loadPackage(name, versions);
      this.loaded.set(name, pkg);
      return pkg;
    });
    // Mark handled: a prefetch the search never awaits must not surface as an unhandled rejection.
    load.catch(() => undefined);
    this.loads.set(name, load);
  }

  private load(name: string): Promise<LoadedPackage | undefined> {
    this.prefetch(name);
    return this.loads.get(name)!;
  }

  private satisfies(range: string, version: LoadedVersion, includePrerelease: boolean): boolean {
    const parsed = this.parsedRange(range);
    return includePrerelease
      ? testRange(parsed.withPrereleases, version.semver, true)
      : testRange(parsed.releasesOnly, version.semver, false);
  }

  private namesPrerelease(requirement: Requirement): boolean {
    return this.parsedRange(requirement.range).namesPrerelease;
  }

  private parsedRange(range: string): ParsedRange {
    let parsed = this.ranges.get(range);
    if (!parsed) {
      parsed = {
        releasesOnly: new Range(range),
        withPrereleases: new Range(range, { includePrerelease: true }),
        namesPrerelease: isPrereleaseRange(range),
      };
      this.ranges.set(range, parsed);
    }
    return parsed;
  }

  private dependenciesOf(version: LoadedVersion): Requirement[] | string {
    if (version.dependencies !== undefined) return version.dependencies;
    const parsed: Requirement[] = [];
    for (const dependency of version.candidate.dependencies) {
      const requirement = typeof dependency === 'string' ? this.parseStored(dependency) : dependency;
      if (typeof requirement === 'string') {
        version.dependencies = `has an invalid dependency "${dependency}": ${requirement}`;
        return version.dependencies;
      }
      parsed.push(requirement);
    }
    version.dependencies = parsed;
    return parsed;
  }

  /** A stored requirement, or why it does not parse. */
  private parseStored(dependency: string): Requirement | string {
    let parsed = this.parsedRequirements.get(dependency);
    if (parsed === undefined) {
      try {
        parsed = parseRequirement(dependency);
      } catch (error) {
        if (!(error instanceof PlatformError)) throw error;
        parsed = error.message.replace(/^Invalid requirement "[^"]*": /, '');
      }
      this.parsedRequirements.set(dependency, parsed);
    }
    return parsed;
  }

  private supportsHost(version: LoadedVersion): boolean {
    if (this.hostVersion === undefined) return true;
    const range = version.candidate.toolboxVersion ?? '';
    let supported = this.hostCompatibility.get(range);
    if (supported === undefined) {
      supported = satisfiesHost(range, this.hostVersion);
      this.hostCompatibility.set(range, supported);
    }
    return supported;
  }

  private matches(version: LoadedVersion, constraints: readonly Constraint[], includePrerelease: boolean): boolean {
    return constraints.every((constraint) => this.satisfies(constraint.requirement.range, version, includePrerelease));
  }

  /**
   * The versions that may be chosen, highest first, or why there are none. Prereleases count
   * once any requirement on the package names one; a yanked version counts only when pinned.
   * Versions known to fail whatever else is chosen are left out without a word: their failure
   * was reported when it was found.
   */
  private examine(
    pkg: LoadedPackage,
    constraints: readonly Constraint[],
  ): { candidates: LoadedVersion[]; failure?: string } {
    const optedIntoPrereleases = constraints.some((constraint) => this.namesPrerelease(constraint.requirement));
    const matching = pkg.versions.filter((version) => this.matches(version, constraints, optedIntoPrereleases));
    if (matching.length === 0)
      return { candidates: [], failure: this.explainNoMatch(pkg, constraints, optedIntoPrereleases) };

    const usable = matching.filter((version) => !version.candidate.yanked || isPinned(version, constraints));
    if (usable.length === 0) {
      return {
        candidates: [],
        failure: `${pkg.name}: every version of ${pkg.name} matching ${writtenRanges(constraints)} is yanked (${requiredByPhrase(constraints[0])}); pin one exactly (==version) to use it anyway`,
      };
    }

    const candidates = usable.filter((version) => this.supportsHost(version));
    if (candidates.length === 0) {
      const matchingText = constraints.every((constraint) => constraint.requirement.range === '*')
        ? ''
        : ` matching ${writtenRanges(constraints)}`;
      return {
        candidates,
        failure: `${pkg.name}: no version of ${pkg.name}${matchingText} supports toolbox ${this.hostVersion}`,
      };
    }
    return { candidates: candidates.filter((version) => !this.dead.has(version)) };
  }

  private explainNoMatch(pkg: LoadedPackage, constraints: readonly Constraint[], includePrerelease: boolean): string {
    const name = pkg.name;
    if (pkg.versions.length === 0) return `${requirementPhrase(constraints[0])}, but ${name} has no published versions`;

    if (!includePrerelease) {
      const prereleases = pkg.versions.filter((version) => this.matches(version, constraints, true));
      if (prereleases.length > 0) {
        return `${name}: only prereleases of ${name} match ${writtenRanges(constraints)} (${listVersions(prereleases)}); name a prerelease in the range to allow them`;
      }
    }

    const alone = constraints.find(
      (constraint) => !pkg.versions.some((version) => this.matches(version, [constraint], includePrerelease)),
    );
    if (alone) {
      const available = pkg.versions.filter((version) => !version.candidate.yanked);
      const shown = available.length > 0 ? available : pkg.versions;
      return `${requirementPhrase(alone)}, but no version of ${name} matches (available: ${listVersions(shown)})`;
    }

    for (let later = 1; later < constraints.length; later += 1) {
      for (let earlier = 0; earlier < later; earlier += 1) {
        const pair = [constraints[earlier], constraints[later]];
        if (!pkg.versions.some((version) => this.matches(version, pair, includePrerelease))) {
          return `${requirementPhrase(pair[0])}, but ${requirementPhrase(pair[1])}`;
        }
      }
    }
    return `no version of ${name} satisfies all of: ${constraints.map(requirementPhrase).join('; ')}`;
  }

  /**
   * The decisions to blame for running out of versions of a package after trying `tried`.
   * Each other version stays out as long as one requirement that excludes it stays, so one
   * source per version is enough (the earliest decided, for the longest jump back). Host
   * incompatibility and known failures hold whatever is decided. A yanked version or a
   * prerelease that fits every requirement is out only for want of a pin or a prerelease range,
   * which another decision could add: every decided package with a version that requires one
   * shares the blame. And the package must still be required at all.
   */
  private blameFor(
    pkg: LoadedPackage,
    constraints: readonly Constraint[],
    tried: readonly LoadedVersion[],
  ): ConflictSet {
    const blame = requiredness(constraints);
    const admittable: LoadedVersion[] = [];
    for (const version of pkg.versions) {
      if (tried.includes(version) || this.dead.has(version) || !this.supportsHost(version)) continue;
      let excludedBy: Constraint | undefined;
      for (const constraint of constraints) {
        if (this.satisfies(constraint.requirement.range, version, true)) continue;
        if (!excludedBy || sourceIndex(constraint) < sourceIndex(excludedBy)) excludedBy = constraint;
      }
      if (excludedBy?.requiredBy) blame.add(excludedBy.requiredBy.name);
      else if (!excludedBy) admittable.push(version);
    }
    if (admittable.length > 0) {
      for (const decision of this.decisions.values()) {
        if (!blame.has(decision.name) && this.couldAdmit(decision.name, pkg.name, admittable)) blame.add(decision.name);
      }
    }
    return blame;
  }

  /** Whether some version of `requirer` requires `name` in a way that admits one of `versions`. */
  private couldAdmit(requirer: string, name: string, versions: readonly LoadedVersion[]): boolean {
    return (this.loaded.get(requirer)?.versions ?? []).some((candidate) => {
      const dependencies = this.dependenciesOf(candidate);
      if (typeof dependencies === 'string') return false;
      return dependencies.some(
        (requirement) =>
          requirement.name === name &&
          (requirement.exact !== undefined
            ? versions.some((version) => isPinned(version, [{ requirement }]))
            : this.namesPrerelease(requirement)),
      );
    });
  }

  /** Checks the candidate's dependencies on packages already decided (and on itself); returns the blame. */
  private clashWithDecided(decision: Decision): ConflictSet | undefined {
    const { name, chosen } = decision;
    const dependencies = this.dependenciesOf(chosen);
    if (typeof dependencies === 'string') {
      this.conflictMessages.add(`${name} ${chosen.candidate.version} ${dependencies}`);
      return new Set();
    }
    for (const requirement of dependencies) {
      const target = requirement.name === name ? chosen : this.decisions.get(requirement.name)?.chosen;
      // A decided prerelease was admitted by some requirement; the rest are judged with prereleases allowed.
      if (!target || this.satisfies(requirement.range, target, true)) continue;
      if (requirement.name === name) {
        this.conflictMessages.add(
          `${name} ${chosen.candidate.version} needs ${describe(requirement)}, which excludes itself`,
        );
        return new Set();
      }
      const newcomer: Constraint = { requirement, requiredBy: decision };
      this.conflictMessages.add(this.explainClash(newcomer, target));
      return new Set([requirement.name]);
    }
    return undefined;
  }

  private explainClash(newcomer: Constraint, decided: LoadedVersion): string {
    const name = newcomer.requirement.name;
    const existing = this.constraints.get(name) ?? [];
    const { candidates, failure } = this.examine(this.loaded.get(name)!, [...existing, newcomer]);
    if (candidates.length === 0)
      return failure ?? `${requirementPhrase(newcomer)}, but no remaining version of ${name} works`;
    const clash = `${requirementPhrase(newcomer)}, but ${name} ${decided.candidate.version} was already chosen (${requiredByPhrase(existing[0])})`;
    // The package was decided before this requirement was known, so versions only it admits (a
    // pinned yanked version, a prerelease) were never candidates: the caller can name it directly.
    const admittedByNewcomer = candidates.some(
      (version) =>
        version.candidate.yanked || (version.semver.prerelease.length > 0 && decided.semver.prerelease.length === 0),
    );
    return admittedByNewcomer ? `${clash}; request ${describe(newcomer.requirement)} directly to allow it` : clash;
  }

  private resolvedPackages(): Map<string, ResolvedPackage> {
    const resolved = new Map<string, ResolvedPackage>();
    for (const { name, chosen } of this.decisions.values()) {
      resolved.set(name, {
        name,
        version: chosen.candidate.version,
        dependencies: chosen.candidate.dependencies.map((dependency) =>
          typeof dependency === 'string' ? dependency : dependency.raw,
        ),
        payload: chosen.candidate.payload,
      });
    }
    return resolved;
  }

  private warnings(): string[] {
    const warnings: string[] = [];
    for (const { name, chosen } of this.decisions.values()) {
      if (!chosen.candidate.yanked) continue;
      const pin = this.constraints.get(name)!.find((constraint) => isPinned(chosen, [constraint]))!;
      const reason = chosen.candidate.yankReason ? ` (${chosen.candidate.yankReason})` : '';
      warnings.push(
        `${name} ${chosen.candidate.version} is yanked${reason}; selected because ${requirementPhrase(pin)} pins it`,
      );
    }
    return [...warnings, ...this.cycles()];
  }

  /** Every dependency cycle among the chosen versions, each reported once, in resolution order. */
  private cycles(): string[] {
    const found = new Set<string>();
    const state = new Map<string, 'active' | 'done'>();
    const path: Decision[] = [];
    const visit = (decision: Decision): void => {
      state.set(decision.name, 'active');
      path.push(decision);
      for (const requirement of decision.chosen.dependencies as Requirement[]) {
        const next = this.decisions.get(requirement.name);
        if (!next) continue;
        const seen = state.get(next.name);
        if (seen === 'active') {
          const loop = path.slice(path.indexOf(next));
          found.add(
            `cycle: ${loop.map((step) => `${step.name} ${step.chosen.candidate.version}`).join(' -> ')} -> ${next.name}`,
          );
        } else if (seen === undefined) {
          visit(next);
        }
      }
      path.pop();
      state.set(decision.name, 'done');
    };
    for (const decision of this.decisions.values()) if (!state.has(decision.name)) visit(decision);
    return [...found];
  }
}

function loadPackage(name: string, versions: readonly CandidateVersion[]): LoadedPackage {
  const loaded: LoadedVersion[] = [];
  for (const candidate of versions) {
    const version = valid(candidate.version);
    if (!version) continue;
    loaded.push({ candidate, semver: new SemVer(version) });
  }
  loaded.sort((left, right) => right.semver.compare(left.semver));
  return { name, versions: loaded };
}

/**
 * `Range#test`, over comparators semver has already parsed. semver's own path calls
 * `compare(new SemVer(a), new SemVer(b))` per comparator and, for a range built with
 * `includePrerelease`, re-parses each comparator's version on every test (its options differ
 * from the range's); that dominated the resolver's profile.
 */
function testRange(range: Range, version: SemVer, includePrerelease: boolean): boolean {
  return range.set.some((comparators) => {
    for (const comparator of comparators) if (!testComparator(comparator, version)) return false;
    if (includePrerelease || version.prerelease.length === 0) return true;
    // npm's rule: a prerelease satisfies only a set that names a prerelease of the same x.y.z.
    return comparators.some(
      (comparator) =>
        typeof comparator.semver === 'object' &&
        comparator.semver.prerelease.length > 0 &&
        comparator.semver.major === version.major &&
        comparator.semver.minor === version.minor &&
        comparator.semver.patch === version.patch,
    );
  });
}

function testComparator(comparator: Comparator, version: SemVer): boolean {
  if (typeof comparator.semver !== 'object') return true; // the "any version" comparator
  const order = version.compare(comparator.semver);
  switch (comparator.operator) {
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    default:
      return order === 0;
  }
}

function isPinned(version: LoadedVersion, constraints: readonly Constraint[]): boolean {
  return constraints.some(
    // `exact` is normalized like SemVer#version (no `v`, no build metadata), so strings compare.
    (constraint) =>
      constraint.requirement.exact !== undefined && version.semver.version === constraint.requirement.exact,
  );
}

/** A root requirement (index -1) outlasts every decision. */
function sourceIndex(constraint: Constraint): number {
  return constraint.requiredBy ? constraint.requiredBy.index : -1;
}

/** What keeps a package required: nothing to undo if it was requested, else its earliest requirer. */
function requiredness(constraints: readonly Constraint[]): ConflictSet {
  let earliest: Constraint | undefined;
  for (const constraint of constraints)
    if (!earliest || sourceIndex(constraint) < sourceIndex(earliest)) earliest = constraint;
  return new Set(earliest?.requiredBy ? [earliest.requiredBy.name] : []);
}

function describe(requirement: Requirement): string {
  return requirement.writtenRange ? `${requirement.name} ${requirement.writtenRange}` : requirement.name;
}

/** `requested lib ^2` for a root requirement, `web 1.2.0 -> app 1.0.0 needs lib ^2` for a transitive one. */
function requirementPhrase(constraint: Constraint): string {
  if (!constraint.requiredBy) return `requested ${describe(constraint.requirement)}`;
  return `${chainTo(constraint.requiredBy)} needs ${describe(constraint.requirement)}`;
}

function requiredByPhrase(constraint: Constraint): string {
  return constraint.requiredBy ? `required by ${chainTo(constraint.requiredBy)}` : 'requested';
}

/**
 * How the search came to a decision (`web 1.2.0 -> app 1.0.0`). Parents are earlier decisions,
 * so the walk ends at a requested package; long chains keep their nearest hops.
 */
function chainTo(decision: Decision): string {
  const hops: string[] = [];
  for (let step: Decision | undefined = decision; step; step = step.parent) {
    if (hops.length === MAX_CHAIN_HOPS) {
      hops.push('…');
      break;
    }
    hops.push(`${step.name} ${step.chosen.candidate.version}`);
  }
  return hops.reverse().join(' -> ');
}

function writtenRanges(constraints: readonly Constraint[]): string {
  const ranges = [...new Set(constraints.map((constraint) => constraint.requirement.writtenRange || '*'))];
  return ranges.join(', ');
}

function listVersions(versions: readonly LoadedVersion[]): string {
  const shown = versions.slice(0, 5).map((version) => version.candidate.version);
  return versions.length > 5 ? `${shown.join(', ')}, …` : shown.join(', ');
}

function capConflicts(conflicts: string[]): string[] {
  if (conflicts.length <= MAX_REPORTED_CONFLICTS) return conflicts;
  const more = conflicts.length - MAX_REPORTED_CONFLICTS;
  return [...conflicts.slice(0, MAX_REPORTED_CONFLICTS), `… and ${more} more conflicts`];
}
