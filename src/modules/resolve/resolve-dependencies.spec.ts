import { PlatformError } from '../../common/errors.js';
import { satisfies } from 'semver';
import type { Requirement } from '../../packaging/requirement.js';
import { isPrereleaseRange, parseRequirement, satisfiesHost } from '../../packaging/requirement.js';
import { resolveDependencies } from './resolve-dependencies.js';
import type { CandidateVersion, PackageCatalog, ResolutionOutcome, ResolveOptions } from './resolve-dependencies.js';

/** A version given as its dependency list, or with the fields a test cares about. */
type VersionSpec =
  | string[]
  | {
      dependencies?: string[];
      yanked?: boolean;
      yankReason?: string;
      toolboxVersion?: string | null;
      payload?: unknown;
    };

type CatalogSpec = Record<string, Record<string, VersionSpec>>;

class FakeCatalog implements PackageCatalog {
  readonly calls: string[] = [];

  constructor(private readonly packages: CatalogSpec) {}

  async versions(name: string): Promise<CandidateVersion[] | undefined> {
    this.calls.push(name);
    const versions = this.packages[name];
    if (!versions) return undefined;
    return Object.entries(versions).map(([version, spec]) => {
      const details = Array.isArray(spec) ? { dependencies: spec } : spec;
      return {
        version,
        yanked: details.yanked ?? false,
        yankReason: details.yankReason ?? null,
        toolboxVersion: details.toolboxVersion ?? null,
        dependencies: details.dependencies ?? [],
        payload: details.payload ?? { checksum: `${name}-${version}` },
      };
    });
  }
}

function resolve(requirements: string[], catalog: CatalogSpec | PackageCatalog, options: ResolveOptions = {}) {
  const source =
    typeof catalog.versions === 'function' ? (catalog as PackageCatalog) : new FakeCatalog(catalog as CatalogSpec);
  return resolveDependencies(
    requirements.map((requirement) => parseRequirement(requirement)),
    source,
    options,
  );
}

function chosen(outcome: ResolutionOutcome): Record<string, string> {
  return Object.fromEntries([...outcome.resolved].map(([name, resolved]) => [name, resolved.version]));
}

/** Versions of `lib` used by the range tests. */
const LIB_VERSIONS: CatalogSpec = {
  lib: Object.fromEntries(
    ['0.9.0', '1.0.0', '1.2.0', '1.4.0', '1.4.5', '1.9.0', '2.0.0', '2.1.0', '3.0.0'].map((version) => [version, []]),
  ),
};

describe('resolveDependencies', () => {
  describe('choosing a version', () => {
    it('succeeds with nothing resolved for no requirements', async () => {
      const outcome = await resolve([], {});
      expect(outcome).toEqual({ success: true, resolved: new Map(), conflicts: [], warnings: [] });
    });

    it('chooses the highest version for a bare name', async () => {
      expect(chosen(await resolve(['lib'], LIB_VERSIONS))).toEqual({ lib: '3.0.0' });
    });

    it.each([
      ['lib^1.2', '1.9.0'],
      ['lib~1.4', '1.4.5'],
      ['lib>=1.0,<2.0', '1.9.0'],
      ['lib>=1.0.0 <1.4.0', '1.2.0'],
      ['lib==1.2.0', '1.2.0'],
      ['lib=1.4.0', '1.4.0'],
      ['lib 1.0.0', '1.0.0'],
      ['lib@^2.0.0', '2.1.0'],
      ['lib 1.0.0 - 1.4.0', '1.4.0'],
      ['lib 1.x', '1.9.0'],
      ['lib<1.0.0', '0.9.0'],
      ['lib>2.0.0', '3.0.0'],
      ['lib<=2.0.0', '2.0.0'],
      ['lib ~1.0 || ~1.2', '1.2.0'],
      ['lib>=1.0,!=1.9.0,<2', '1.4.5'],
      ['lib~=1.4', '1.9.0'],
      ['lib~=1.4.0', '1.4.5'],
    ])('chooses the highest match for %s (%s)', async (requirement, version) => {
      expect(chosen(await resolve([requirement], LIB_VERSIONS))).toEqual({ lib: version });
    });

    it('accepts the {name, version} request form', async () => {
      const outcome = await resolveDependencies(
        [parseRequirement({ name: 'lib', version: '^1.0.0' })],
        new FakeCatalog(LIB_VERSIONS),
      );
      expect(chosen(outcome)).toEqual({ lib: '1.9.0' });
    });

    it('passes the payload through untouched', async () => {
      const payload = { checksum: 'abc', storageKey: 'lib/1.0.0.zip' };
      const outcome = await resolve(['lib'], { lib: { '1.0.0': { payload } } });
      expect(outcome.resolved.get('lib')!.payload).toBe(payload);
    });

    it("lists the chosen version's dependencies as stored", async () => {
      const outcome = await resolve(['app'], {
        app: { '1.0.0': ['lib>=1.0,<2.0', 'util'] },
        lib: { '1.0.0': [] },
        util: { '1.0.0': [] },
      });
      expect(outcome.resolved.get('app')).toEqual({
        name: 'app',
        version: '1.0.0',
        dependencies: ['lib>=1.0,<2.0', 'util'],
        payload: { checksum: 'app-1.0.0' },
      });
    });

    it('accepts dependencies that are already parsed requirements', async () => {
      const catalog: PackageCatalog = {
        versions: async (name) =>
          name === 'app'
            ? [{ version: '1.0.0', yanked: false, toolboxVersion: null, dependencies: [parseRequirement('lib^1')] }]
            : [{ version: '1.5.0', yanked: false, toolboxVersion: null, dependencies: [] }],
      };
      const outcome = await resolveDependencies([parseRequirement('app')], catalog);
      expect(outcome.resolved.get('app')!.dependencies).toEqual(['lib^1']);
    });

    it('ignores catalog versions that are not semantic versions', async () => {
      expect(chosen(await resolve(['lib'], { lib: { '1.0.0': [], banana: [], '9.x': [] } }))).toEqual({ lib: '1.0.0' });
    });

    it('satisfies two root requirements on the same package together', async () => {
      expect(chosen(await resolve(['lib>=1.2', 'lib<1.9'], LIB_VERSIONS))).toEqual({ lib: '1.4.5' });
    });
  });

  describe('transitive dependencies', () => {
    it('resolves dependencies of dependencies', async () => {
      const outcome = await resolve(['app'], {
        app: { '1.0.0': ['mid^1'] },
        mid: { '1.0.0': ['leaf~2.1'], '1.1.0': ['leaf~2.2'] },
        leaf: { '2.1.0': [], '2.2.3': [], '3.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ app: '1.0.0', mid: '1.1.0', leaf: '2.2.3' });
    });

    it('lists packages in resolution order: requested first, then breadth first', async () => {
      const outcome = await resolve(['app', 'tool'], {
        app: { '1.0.0': ['lib', 'util'] },
        tool: { '1.0.0': ['zeta'] },
        lib: { '1.0.0': ['deep'] },
        util: { '1.0.0': [] },
        zeta: { '1.0.0': [] },
        deep: { '1.0.0': [] },
      });
      expect([...outcome.resolved.keys()]).toEqual(['app', 'tool', 'lib', 'util', 'zeta', 'deep']);
    });

    it('resolves a diamond to one version that satisfies both sides', async () => {
      const outcome = await resolve(['left', 'right'], {
        left: { '1.0.0': ['base^1'] },
        right: { '1.0.0': ['base~1.2'] },
        base: { '1.1.0': [], '1.2.4': [], '1.3.0': [], '2.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ left: '1.0.0', right: '1.0.0', base: '1.2.4' });
    });

    it('does not report a diamond as a cycle', async () => {
      const outcome = await resolve(['left', 'right'], {
        left: { '1.0.0': ['base'] },
        right: { '1.0.0': ['base'] },
        base: { '1.0.0': [] },
      });
      expect(outcome.warnings).toEqual([]);
    });
  });

  describe('backtracking', () => {
    it('falls back to a lower version whose dependencies fit', async () => {
      const outcome = await resolve(['a', 'c'], {
        a: { '2.0.0': ['b^2'], '1.0.0': ['b^1'] },
        c: { '1.0.0': ['b~1.0'] },
        b: { '2.0.0': [], '1.0.5': [], '1.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ a: '1.0.0', c: '1.0.0', b: '1.0.5' });
    });

    it('reports no conflicts once backtracking succeeds', async () => {
      const outcome = await resolve(['a', 'c'], {
        a: { '2.0.0': ['b^2'], '1.0.0': ['b^1'] },
        c: { '1.0.0': ['b~1.0'] },
        b: { '2.0.0': [], '1.0.0': [] },
      });
      expect([outcome.success, outcome.conflicts]).toEqual([true, []]);
    });

    it('retries the later requirer whose range shut out the only version', async () => {
      const outcome = await resolve(['a', 'y'], {
        a: { '1.0.0': ['t'] },
        y: { '2.0.0': ['t^2'], '1.0.0': ['t^1'] },
        t: { '1.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ a: '1.0.0', y: '1.0.0', t: '1.0.0' });
    });

    it('tries each lower candidate in turn', async () => {
      const outcome = await resolve(['a', 'c'], {
        a: { '3.0.0': ['b^3'], '2.0.0': ['b^2'], '1.0.0': ['b^1'], '0.1.0': [] },
        c: { '1.0.0': ['b^1'] },
        b: { '3.0.0': [], '2.0.0': [], '1.0.0': [] },
      });
      expect(chosen(outcome).a).toBe('1.0.0');
    });

    it('revisits a dependency chosen earlier when a later package needs an older one', async () => {
      const outcome = await resolve(['a', 'b'], {
        a: { '1.0.0': ['shared'] },
        b: { '1.0.0': ['d'] },
        d: { '1.0.0': ['shared~1.0'] },
        shared: { '1.5.0': [], '1.0.3': [], '1.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ a: '1.0.0', b: '1.0.0', shared: '1.0.3', d: '1.0.0' });
    });

    it('backtracks to the top when the clash is found several levels down', async () => {
      const outcome = await resolve(['top', 'pin'], {
        top: { '2.0.0': ['one^2'], '1.0.0': ['one^1'] },
        one: { '2.0.0': ['two^2'], '1.0.0': ['two^1'] },
        two: { '2.0.0': ['three^2'], '1.0.0': ['three^1'] },
        three: { '2.0.0': [], '1.0.0': [] },
        pin: { '1.0.0': ['three^1'] },
      });
      expect(chosen(outcome)).toEqual({ top: '1.0.0', pin: '1.0.0', one: '1.0.0', three: '1.0.0', two: '1.0.0' });
    });

    it('revisits an unrelated earlier choice when its other version could pin a yanked version', async () => {
      const outcome = await resolve(['d', 'p'], {
        d: { '2.0.0': [], '1.0.0': ['p==2.0.0'] },
        p: { '2.0.0': { yanked: true }, '1.0.0': ['q^2'] },
        q: { '1.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ d: '1.0.0', p: '2.0.0' });
    });

    it('revisits an unrelated earlier choice when its other version could admit a prerelease', async () => {
      const outcome = await resolve(['d', 'p'], {
        d: { '2.0.0': [], '1.0.0': ['p>=2.0.0-beta.1'] },
        p: { '2.0.0-beta.1': [], '1.0.0': ['q^2'] },
        q: { '1.0.0': [] },
      });
      expect(chosen(outcome)).toEqual({ d: '1.0.0', p: '2.0.0-beta.1' });
    });

    it('fails with no packages resolved when no combination works', async () => {
      const outcome = await resolve(['a', 'c'], {
        a: { '2.0.0': ['b^2'], '1.0.0': ['b^2'] },
        c: { '1.0.0': ['b~1.0'] },
        b: { '2.0.0': [], '1.0.0': [] },
      });
      expect([outcome.success, outcome.resolved.size]).toEqual([false, 0]);
    });

    it('gives up with a conflict once the step limit is reached', async () => {
      const outcome = await resolve(
        ['a', 'c'],
        {
          a: { '3.0.0': ['b^3'], '2.0.0': ['b^2'], '1.0.0': ['b^1'] },
          c: { '1.0.0': ['b~1.0'] },
          b: { '3.0.0': [], '2.0.0': [], '1.0.0': [] },
        },
        { maxSteps: 4 },
      );
      expect([outcome.success, outcome.conflicts[0]]).toEqual([
        false,
        'resolution gave up after 4 steps; pin some versions to narrow the search',
      ]);
    });

    it('stays within the default step limit on a wide graph with a late conflict', async () => {
      // Twenty packages with ten versions each and a conflict that no choice of theirs can fix:
      // without backjumping this would be 10^20 combinations.
      const catalog: CatalogSpec = { base: { '1.0.0': [], '2.0.0': [] }, last: { '1.0.0': ['base^2'] } };
      const roots = ['base^1'];
      for (let index = 0; index < 20; index += 1) {
        catalog[`p${index}`] = Object.fromEntries(
          Array.from({ length: 10 }, (_, version) => [`${version + 1}.0.0`, []]),
        );
        roots.push(`p${index}`);
      }
      roots.push('last');
      const outcome = await resolve(roots, catalog);
      expect(outcome.conflicts).toEqual(['requested base ^1, but last 1.0.0 needs base ^2']);
    });

    it('does not retry a version that fails whatever else is chosen', async () => {
      // Six levels of five versions each all lead to the same dead end: trying every
      // combination would take 5^6 steps; a version that failed on its own is not tried again.
      const catalog: CatalogSpec = { broken: { '2.0.0': [], '1.0.0': { yanked: true } } };
      for (let level = 0; level < 6; level += 1) {
        const next = level === 5 ? 'broken^1' : `level${level + 1}`;
        catalog[`level${level}`] = Object.fromEntries(
          Array.from({ length: 5 }, (_, version) => [`${version + 1}.0.0`, [next]]),
        );
      }
      const outcome = await resolve(['level0'], catalog, { maxSteps: 200 });
      expect(outcome.conflicts[0]).toBe(
        'broken: every version of broken matching ^1 is yanked (required by … -> level1 5.0.0 -> level2 5.0.0 -> level3 5.0.0 -> level4 5.0.0 -> level5 5.0.0); pin one exactly (==version) to use it anyway',
      );
    });
  });

  describe('conflict messages', () => {
    it('names both requirers of a clash', async () => {
      const outcome = await resolve(['app', 'cli'], {
        app: { '1.0.0': ['lib^2'] },
        cli: { '3.1.0': ['lib~1.4'] },
        lib: { '2.0.0': [], '1.4.2': [] },
      });
      expect(outcome.conflicts).toEqual(['app 1.0.0 needs lib ^2, but cli 3.1.0 needs lib ~1.4']);
    });

    it('describes a root requirement as requested', async () => {
      const outcome = await resolve(['lib^2', 'cli'], {
        cli: { '3.1.0': ['lib~1.4'] },
        lib: { '2.0.0': [], '1.4.2': [] },
      });
      expect(outcome.conflicts).toEqual(['requested lib ^2, but cli 3.1.0 needs lib ~1.4']);
    });

    it('names the chain that led to a transitive requirer', async () => {
      const outcome = await resolve(['web', 'cli'], {
        web: { '1.2.0': ['app'] },
        app: { '1.0.0': ['lib^2'] },
        cli: { '3.1.0': ['lib~1.4'] },
        lib: { '2.0.0': [], '1.4.2': [] },
      });
      expect(outcome.conflicts).toEqual(['cli 3.1.0 needs lib ~1.4, but web 1.2.0 -> app 1.0.0 needs lib ^2']);
    });

    it('reports each candidate that was tried and failed', async () => {
      const outcome = await resolve(['app', 'cli'], {
        app: { '1.1.0': ['lib^2'], '1.0.0': ['lib^3'] },
        cli: { '3.1.0': ['lib~1.4'] },
        lib: { '3.0.0': [], '2.0.0': [], '1.4.2': [] },
      });
      expect(outcome.conflicts).toEqual([
        'app 1.1.0 needs lib ^2, but cli 3.1.0 needs lib ~1.4',
        'app 1.0.0 needs lib ^3, but cli 3.1.0 needs lib ~1.4',
      ]);
    });

    it('says when no version matches a range at all, listing what exists', async () => {
      const outcome = await resolve(['lib^5'], LIB_VERSIONS);
      expect(outcome.conflicts).toEqual([
        'requested lib ^5, but no version of lib matches (available: 3.0.0, 2.1.0, 2.0.0, 1.9.0, 1.4.5, …)',
      ]);
    });

    it('says when a package has no versions', async () => {
      const outcome = await resolve(['app'], { app: { '1.0.0': ['empty'] }, empty: {} });
      expect(outcome.conflicts).toEqual(['app 1.0.0 needs empty, but empty has no published versions']);
    });

    it('lists every requirement when only three together clash', async () => {
      const outcome = await resolve(['lib>=1.0.0 <1.5.0 || >=2.0.0', 'lib<2', 'lib>=1.5'], LIB_VERSIONS);
      expect(outcome.conflicts).toEqual([
        'no version of lib satisfies all of: requested lib >=1.0.0 <1.5.0 || >=2.0.0; requested lib <2; requested lib >=1.5',
      ]);
    });

    it('blames a dependency that no version matches, not the version chosen earlier', async () => {
      const outcome = await resolve(['lib', 'app'], {
        lib: { '2.0.0': [] },
        app: { '1.0.0': ['lib^1'] },
      });
      expect(outcome.conflicts).toEqual(['app 1.0.0 needs lib ^1, but no version of lib matches (available: 2.0.0)']);
    });

    it('names the requirer whose dependency clashes with a decided package', async () => {
      const outcome = await resolve(['lib~1.4', 'app'], {
        lib: { '1.4.2': [], '2.0.0': [] },
        app: { '1.0.0': ['lib^2'] },
      });
      expect(outcome.conflicts).toEqual(['requested lib ~1.4, but app 1.0.0 needs lib ^2']);
    });

    it('says when a dependency could have fitted a version other than the one chosen', async () => {
      const outcome = await resolve(['lib', 'app'], {
        lib: { '2.0.0': [], '1.4.2': [] },
        app: { '1.0.0': ['lib~1.4', 'ghost'] },
      });
      expect(outcome.conflicts).toEqual([
        'app 1.0.0 needs lib ~1.4, but lib 2.0.0 was already chosen (requested)',
        'unknown package ghost (required by app 1.0.0)',
      ]);
    });

    it('blames yanking when only a yanked version would fit a version chosen earlier', async () => {
      const outcome = await resolve(['lib', 'app'], {
        lib: { '2.0.0': [], '1.4.2': { yanked: true } },
        app: { '1.0.0': ['lib~1.4'] },
      });
      expect(outcome.conflicts).toEqual([
        'lib: every version of lib matching *, ~1.4 is yanked (requested); pin one exactly (==version) to use it anyway',
      ]);
    });

    it('reports each distinct conflict once', async () => {
      const outcome = await resolve(['x', 'y'], {
        x: { '1.0.0': ['lib^2'] },
        y: { '2.0.0': ['lib^1'], '1.0.0': ['lib^1'] },
        lib: { '2.0.0': [], '1.0.0': [] },
      });
      expect(new Set(outcome.conflicts).size).toBe(outcome.conflicts.length);
    });
  });

  describe('cycles', () => {
    it('terminates on a cycle and reports it as a warning', async () => {
      const outcome = await resolve(['a'], { a: { '1.0.0': ['b'] }, b: { '2.0.0': ['a'] } });
      expect([outcome.success, chosen(outcome), outcome.warnings]).toEqual([
        true,
        { a: '1.0.0', b: '2.0.0' },
        ['cycle: a 1.0.0 -> b 2.0.0 -> a'],
      ]);
    });

    it('reports a package that depends on itself', async () => {
      const outcome = await resolve(['a'], { a: { '1.0.0': ['a>=1'] } });
      expect(outcome.warnings).toEqual(['cycle: a 1.0.0 -> a']);
    });

    it('rejects a version that depends on itself with a range excluding itself', async () => {
      const outcome = await resolve(['a'], { a: { '2.0.0': ['a^1'], '1.0.0': [] } });
      expect(chosen(outcome)).toEqual({ a: '1.0.0' });
    });

    it('reports a three-package cycle once', async () => {
      const outcome = await resolve(['a', 'b'], {
        a: { '1.0.0': ['b'] },
        b: { '1.0.0': ['c'] },
        c: { '1.0.0': ['a'] },
      });
      expect(outcome.warnings).toEqual(['cycle: a 1.0.0 -> b 1.0.0 -> c 1.0.0 -> a']);
    });

    it('backtracks when the edge closing a cycle does not fit', async () => {
      const outcome = await resolve(['a'], { a: { '2.0.0': ['b'], '1.0.0': ['b'] }, b: { '1.0.0': ['a^1'] } });
      expect([chosen(outcome), outcome.warnings]).toEqual([
        { a: '1.0.0', b: '1.0.0' },
        ['cycle: a 1.0.0 -> b 1.0.0 -> a'],
      ]);
    });
  });

  describe('yanked versions', () => {
    const catalog: CatalogSpec = {
      lib: { '1.0.0': [], '1.1.0': { yanked: true, yankReason: 'corrupt archive' }, '2.0.0': { yanked: true } },
    };

    it('skips yanked versions', async () => {
      expect(chosen(await resolve(['lib'], catalog))).toEqual({ lib: '1.0.0' });
    });

    it('selects a yanked version pinned with ==, with a warning giving the reason', async () => {
      const outcome = await resolve(['lib==1.1.0'], catalog);
      expect([chosen(outcome), outcome.warnings]).toEqual([
        { lib: '1.1.0' },
        ['lib 1.1.0 is yanked (corrupt archive); selected because requested lib ==1.1.0 pins it'],
      ]);
    });

    it('selects a yanked version pinned with a bare version', async () => {
      expect(chosen(await resolve(['lib@2.0.0'], catalog))).toEqual({ lib: '2.0.0' });
    });

    it('selects a yanked version pinned by a dependency', async () => {
      const outcome = await resolve(['app'], { ...catalog, app: { '1.0.0': ['lib=2.0.0'] } });
      expect([chosen(outcome).lib, outcome.warnings]).toEqual([
        '2.0.0',
        ['lib 2.0.0 is yanked; selected because app 1.0.0 needs lib =2.0.0 pins it'],
      ]);
    });

    it('does not select a pinned yanked version that another requirement excludes', async () => {
      const outcome = await resolve(['lib==1.1.0', 'app'], { ...catalog, app: { '1.0.0': ['lib^2'] } });
      expect(outcome.conflicts).toEqual(['requested lib ==1.1.0, but app 1.0.0 needs lib ^2']);
    });

    it('does not let a range select a yanked version', async () => {
      const outcome = await resolve(['lib>=1.1.0'], catalog);
      expect(outcome.conflicts).toEqual([
        'lib: every version of lib matching >=1.1.0 is yanked (requested); pin one exactly (==version) to use it anyway',
      ]);
    });
  });

  describe('prereleases', () => {
    const catalog: CatalogSpec = { lib: { '1.9.0': [], '2.0.0-beta.1': [], '2.0.0-beta.2': [], '2.1.0-rc.1': [] } };

    it('excludes prereleases from a bare name', async () => {
      expect(chosen(await resolve(['lib'], catalog))).toEqual({ lib: '1.9.0' });
    });

    it('excludes prereleases from a range that names none', async () => {
      expect(chosen(await resolve(['lib>=1.0.0'], catalog))).toEqual({ lib: '1.9.0' });
    });

    it('includes prereleases when the range names one', async () => {
      expect(chosen(await resolve(['lib>=2.0.0-beta.1'], catalog))).toEqual({ lib: '2.1.0-rc.1' });
    });

    it('includes prereleases for the ^x.y.z-0 idiom', async () => {
      expect(chosen(await resolve(['lib^2.0.0-0'], catalog))).toEqual({ lib: '2.1.0-rc.1' });
    });

    it('selects a pinned prerelease', async () => {
      expect(chosen(await resolve(['lib==2.0.0-beta.1'], catalog))).toEqual({ lib: '2.0.0-beta.1' });
    });

    it('admits prereleases for a package once any requirement on it names one', async () => {
      const outcome = await resolve(['lib>=2.0.0-beta.1', 'app'], { ...catalog, app: { '1.0.0': ['lib>=1'] } });
      expect(chosen(outcome).lib).toBe('2.1.0-rc.1');
    });

    it('judges every requirement with prereleases allowed once the package is opted in', async () => {
      const outcome = await resolve(['lib>=2.0.0-beta.1', 'app'], { ...catalog, app: { '1.0.0': ['lib^2'] } });
      expect(chosen(outcome).lib).toBe('2.1.0-rc.1');
    });

    it('keeps excluding prereleases of other release lines from a caret range', async () => {
      const outcome = await resolve(['lib^1.0.0-0'], { lib: { '1.9.0': [], '2.0.0-beta.1': [], '1.10.0-rc.1': [] } });
      expect(chosen(outcome).lib).toBe('1.10.0-rc.1');
    });

    it('suggests requesting a prerelease range directly when the package was decided before it arrived', async () => {
      // Known limit: `lib` is decided (without prereleases) before app's requirement is seen.
      const outcome = await resolve(['lib', 'app'], { ...catalog, app: { '1.0.0': ['lib>=2.1.0-rc.1'] } });
      expect(outcome.conflicts).toEqual([
        'app 1.0.0 needs lib >=2.1.0-rc.1, but lib 1.9.0 was already chosen (requested); request lib >=2.1.0-rc.1 directly to allow it',
      ]);
    });

    it('resolves that case once the prerelease range is requested directly', async () => {
      const outcome = await resolve(['lib', 'app', 'lib>=2.1.0-rc.1'], {
        ...catalog,
        app: { '1.0.0': ['lib>=2.1.0-rc.1'] },
      });
      expect(chosen(outcome)).toEqual({ lib: '2.1.0-rc.1', app: '1.0.0' });
    });

    it('says so when only prereleases match', async () => {
      const outcome = await resolve(['lib^2'], catalog);
      expect(outcome.conflicts).toEqual([
        'lib: only prereleases of lib match ^2 (2.1.0-rc.1); name a prerelease in the range to allow them',
      ]);
    });
  });

  describe('toolbox compatibility', () => {
    const catalog: CatalogSpec = {
      lib: {
        '2.1.0': { toolboxVersion: '>=2.0.0' },
        '2.0.0': { toolboxVersion: '>=1.4.0' },
        '1.0.0': { toolboxVersion: null },
      },
    };

    it('skips versions that do not support the host', async () => {
      expect(chosen(await resolve(['lib'], catalog, { hostVersion: '1.5.0' }))).toEqual({ lib: '2.0.0' });
    });

    it('treats a missing toolbox range as any host', async () => {
      expect(chosen(await resolve(['lib^1'], catalog, { hostVersion: '0.1.0' }))).toEqual({ lib: '1.0.0' });
    });

    it('ignores toolbox ranges when no host version is given', async () => {
      expect(chosen(await resolve(['lib'], catalog))).toEqual({ lib: '2.1.0' });
    });

    it('accepts a partial host version', async () => {
      expect(chosen(await resolve(['lib'], catalog, { hostVersion: '2.0' }))).toEqual({ lib: '2.1.0' });
    });

    it('reports a conflict that names the host when no matching version supports it', async () => {
      const outcome = await resolve(['lib^2.0.0'], catalog, { hostVersion: '1.3.0' });
      expect([outcome.success, outcome.conflicts]).toEqual([
        false,
        ['lib: no version of lib matching ^2.0.0 supports toolbox 1.3.0'],
      ]);
    });

    it('reports a host conflict for a bare name without a range', async () => {
      const outcome = await resolve(['lib'], { lib: { '1.0.0': { toolboxVersion: '>=3' } } }, { hostVersion: '1.3.0' });
      expect(outcome.conflicts).toEqual(['lib: no version of lib supports toolbox 1.3.0']);
    });

    it('backtracks to a dependent version whose dependencies support the host', async () => {
      const outcome = await resolve(
        ['app'],
        {
          app: { '2.0.0': ['lib^2'], '1.0.0': ['lib^1'] },
          lib: { '2.0.0': { toolboxVersion: '>=3.0.0' }, '1.0.0': {} },
        },
        { hostVersion: '2.5.0' },
      );
      expect(chosen(outcome)).toEqual({ app: '1.0.0', lib: '1.0.0' });
    });

    it('rejects an invalid host version with a 400', async () => {
      await expect(resolve(['lib'], catalog, { hostVersion: 'newest' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe('unknown packages and bad data', () => {
    it('reports an unknown requested package', async () => {
      const outcome = await resolve(['ghost'], {});
      expect([outcome.success, outcome.conflicts]).toEqual([false, ['unknown package ghost (requested)']]);
    });

    it('names the requirer of an unknown dependency', async () => {
      const outcome = await resolve(['web'], { web: { '1.0.0': ['app'] }, app: { '1.0.0': ['ghost^1'] } });
      expect(outcome.conflicts).toEqual(['unknown package ghost (required by web 1.0.0 -> app 1.0.0)']);
    });

    it('falls back to a version without the unknown dependency', async () => {
      const outcome = await resolve(['app'], { app: { '2.0.0': ['ghost'], '1.0.0': [] } });
      expect(chosen(outcome)).toEqual({ app: '1.0.0' });
    });

    it('skips a version whose stored dependency is malformed', async () => {
      const outcome = await resolve(['app'], { app: { '2.0.0': ['lib^^1'], '1.0.0': [] } });
      expect(chosen(outcome)).toEqual({ app: '1.0.0' });
    });

    it('explains a malformed stored dependency when nothing else works', async () => {
      const outcome = await resolve(['app'], { app: { '2.0.0': ['lib^^1'] } });
      expect(outcome.conflicts).toEqual([
        'app 2.0.0 has an invalid dependency "lib^^1": "^^1" is not a valid version range',
      ]);
    });
  });

  describe('catalog use', () => {
    it('loads each package once, even across diamonds and backtracking', async () => {
      const catalog = new FakeCatalog({
        a: { '2.0.0': ['b^2', 'shared'], '1.0.0': ['b^1', 'shared'] },
        c: { '1.0.0': ['b~1.0', 'shared'] },
        b: { '2.0.0': ['shared'], '1.0.0': ['shared'] },
        shared: { '1.0.0': [] },
      });
      await resolve(['a', 'c'], catalog);
      expect(catalog.calls.sort()).toEqual(['a', 'b', 'c', 'shared']);
    });

    it('passes a catalog failure on to the caller', async () => {
      const failing: PackageCatalog = { versions: async () => Promise.reject(new Error('database down')) };
      await expect(resolveDependencies([parseRequirement('lib')], failing)).rejects.toThrow('database down');
    });

    it('does not raise unhandled rejections for prefetched packages it never needed', async () => {
      const catalog: PackageCatalog = {
        versions: async (name) => {
          if (name === 'broken') throw new Error('never awaited');
          return [{ version: '1.0.0', yanked: false, toolboxVersion: null, dependencies: [] }];
        },
      };
      const unhandled: unknown[] = [];
      const listener = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', listener);
      const outcome = await resolveDependencies(
        [parseRequirement('ghost-free'), parseRequirement('broken')],
        catalog,
      ).catch((error: Error) => error);
      await new Promise((resolveLater) => setTimeout(resolveLater, 10));
      process.off('unhandledRejection', listener);
      expect([outcome instanceof Error, unhandled]).toEqual([true, []]);
    });
  });

  describe('determinism', () => {
    const catalog: CatalogSpec = {
      app: { '1.0.0': ['lib^1', 'util', 'cycle'], '1.1.0': ['lib^2', 'util', 'cycle'] },
      cli: { '1.0.0': ['lib~1.2', 'util'] },
      lib: { '1.2.0': ['util'], '1.2.9': ['util'], '2.0.0': [] },
      util: { '0.1.0': [], '0.2.0': ['cycle'] },
      cycle: { '1.0.0': ['util'] },
    };

    it('gives the same outcome, order included, on every run', async () => {
      const first = await resolve(['app', 'cli'], catalog);
      const second = await resolve(['app', 'cli'], catalog);
      expect([[...second.resolved], second.warnings]).toEqual([[...first.resolved], first.warnings]);
    });

    it('does not depend on the order the catalog lists versions in', async () => {
      const reversed: CatalogSpec = Object.fromEntries(
        Object.entries(catalog).map(([name, versions]) => [
          name,
          Object.fromEntries(Object.entries(versions).reverse()),
        ]),
      );
      const first = await resolve(['app', 'cli'], catalog);
      const second = await resolve(['app', 'cli'], reversed);
      expect([...second.resolved]).toEqual([...first.resolved]);
    });

    it('resolves the determinism fixture as expected', async () => {
      const outcome = await resolve(['app', 'cli'], catalog);
      expect([chosen(outcome), outcome.warnings]).toEqual([
        { app: '1.0.0', cli: '1.0.0', lib: '1.2.9', util: '0.2.0', cycle: '1.0.0' },
        ['cycle: util 0.2.0 -> cycle 1.0.0 -> util'],
      ]);
    });
  });

  it('throws PlatformError, not a plain Error, for bad options', async () => {
    await expect(resolve(['lib'], LIB_VERSIONS, { hostVersion: '' })).rejects.toBeInstanceOf(PlatformError);
  });

  describe('against a brute-force search over small random catalogs', () => {
    // Every assignment of "absent or one version" per package is tried; a solution is exactly the
    // closure of the requirements with each chosen version admissible under all requirements on it.
    // A package cannot admit itself (opt itself into prereleases, pin its own yanked version).
    const VERSIONS = ['1.0.0', '1.1.0', '1.2.0-beta.1', '1.2.0', '2.0.0-rc.1', '2.0.0', '2.1.0', '3.0.0'];
    const RANGES = [
      '',
      '^1',
      '^2',
      '~1.1',
      '>=1.1,<2.1',
      '>=2.0.0-rc.1',
      '==1.1.0',
      '==2.0.0',
      '1.0.0 - 2.0.0',
      '<2',
      '>=1.2.0-0',
      '*',
    ];
    const HOSTS = [null, null, null, '>=1.5.0', '<1.5.0', '^2'];
    let seed = 20240601;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const requirementOf = (name: string, range: string) => parseRequirement(range ? `${name} ${range}` : name);

    function randomCase() {
      const names = Array.from({ length: 3 + Math.floor(random() * 3) }, (_, index) => `p${index}`);
      const catalog: Record<string, CandidateVersion[]> = {};
      for (const name of names) {
        const versions = [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(VERSIONS)))];
        catalog[name] = versions.map((version) => ({
          version,
          yanked: random() < 0.15,
          toolboxVersion: pick(HOSTS),
          dependencies: Array.from(
            { length: Math.floor(random() * 3) },
            () => requirementOf(pick(names), pick(RANGES)).raw,
          ),
        }));
      }
      const roots = Array.from({ length: 1 + Math.floor(random() * 2) }, () =>
        requirementOf(pick(names), pick(RANGES)),
      );
      return { names, catalog, roots, hostVersion: random() < 0.5 ? '1.6.0' : undefined };
    }

    function isSolution(chosen: Map<string, CandidateVersion>, roots: Requirement[], hostVersion?: string): boolean {
      const requirements = new Map<string, { requirement: Requirement; from?: string }[]>();
      const add = (requirement: Requirement, from?: string) =>
        requirements.set(requirement.name, [...(requirements.get(requirement.name) ?? []), { requirement, from }]);
      for (const requirement of roots) add(requirement);
      for (const [from, version] of chosen)
        for (const dependency of version.dependencies) add(parseRequirement(dependency as string), from);
      if (requirements.size !== chosen.size) return false;
      return [...requirements].every(([name, onName]) => {
        const version = chosen.get(name);
        if (!version) return false;
        const others = onName.filter(({ from }) => from !== name);
        const optedIn = others.some(({ requirement }) => isPrereleaseRange(requirement.range));
        return (
          onName.every(({ requirement, from }) =>
            satisfies(version.version, requirement.range, { includePrerelease: optedIn || from === name }),
          ) &&
          (!version.yanked || others.some(({ requirement }) => requirement.exact === version.version)) &&
          (hostVersion === undefined || satisfiesHost(version.toolboxVersion, hostVersion))
        );
      });
    }

    function solutionExists(
      names: string[],
      catalog: Record<string, CandidateVersion[]>,
      roots: Requirement[],
      hostVersion?: string,
    ) {
      const chosen = new Map<string, CandidateVersion>();
      const walk = (index: number): boolean => {
        if (index === names.length) return isSolution(chosen, roots, hostVersion);
        if (walk(index + 1)) return true;
        for (const version of catalog[names[index]]) {
          chosen.set(names[index], version);
          if (walk(index + 1)) return true;
          chosen.delete(names[index]);
        }
        return false;
      };
      return walk(0);
    }

    it('succeeds exactly when a solution exists, and every solution it returns is one', async () => {
      const disagreements: string[] = [];
      for (let run = 0; run < 100; run += 1) {
        const { names, catalog, roots, hostVersion } = randomCase();
        const outcome = await resolveDependencies(roots, { versions: async (name) => catalog[name] }, { hostVersion });
        const returned = new Map(
          [...outcome.resolved].map(([name, resolved]) => [
            name,
            catalog[name].find((version) => version.version === resolved.version)!,
          ]),
        );
        const expected = solutionExists(names, catalog, roots, hostVersion);
        if (outcome.success !== expected || (outcome.success && !isSolution(returned, roots, hostVersion))) {
          disagreements.push(
            JSON.stringify({ roots: roots.map((root) => root.raw), catalog, hostVersion, outcome: outcome.success }),
          );
        }
      }
      expect(disagreements).toEqual([]);
    });
  });
});
