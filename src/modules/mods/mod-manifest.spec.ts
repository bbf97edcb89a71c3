import { PlatformError } from '../../common/errors.js';
import { parseModManifest, supportsHostVersion } from './mod-manifest.js';

const valid = {
  name: 'hello-mod',
  version: '1.0.0',
  entry: 'index.js',
  dependencies: ['lib>=1.2.0'],
  toolbox_version: '>=0.1.0 <1',
};

function problemsOf(input: unknown): string[] {
  try {
    parseModManifest(input);
  } catch (error) {
    return ((error as PlatformError).fieldErrors ?? []).map((problem) => problem.field);
  }
  throw new Error('expected the manifest to be refused');
}

describe('parseModManifest', () => {
  it('accepts a complete manifest and maps toolbox_version to toolboxVersion', () => {
    const manifest = parseModManifest(JSON.stringify(valid));
    expect(manifest).toEqual({
      name: 'hello-mod',
      version: '1.0.0',
      entry: 'index.js',
      dependencies: ['lib@>=1.2.0'],
      toolboxVersion: '>=0.1.0 <1',
      description: null,
    });
  });

  it('defaults the entry to index.js and the dependencies to none', () => {
    const manifest = parseModManifest({ name: 'm', version: '0.1.0' });
    expect([manifest.entry, manifest.dependencies, manifest.toolboxVersion]).toEqual(['index.js', [], null]);
  });

  it('accepts dependencies as an object of name to range', () => {
    expect(parseModManifest({ ...valid, dependencies: { lib: '^1.2', other: '' } }).dependencies).toEqual([
      'lib@^1.2',
      'other',
    ]);
  });

  it('reports every invalid field at once', () => {
    expect(
      problemsOf({ name: '../evil', version: '1.0', entry: '/etc/passwd', toolbox_version: 'not a range' }),
    ).toEqual(['name', 'version', 'entry', 'toolbox_version']);
  });

  it('refuses an entry that climbs out of the mod with ..', () => {
    expect(problemsOf({ ...valid, entry: 'lib/../../outside.js' })).toEqual(['entry']);
  });

  it('refuses an entry that is not a JavaScript module', () => {
    expect(problemsOf({ ...valid, entry: 'index.ts' })).toEqual(['entry']);
  });

  it('refuses a dependency that is not a requirement', () => {
    expect(problemsOf({ ...valid, dependencies: ['lib>=not-a-version'] })).toEqual(['dependencies']);
  });

  it('refuses text that is not JSON with an UNPROCESSABLE_ENTITY error', () => {
    expect(() => parseModManifest('{name:')).toThrow(expect.objectContaining({ code: 'UNPROCESSABLE_ENTITY' }));
  });
});

describe('supportsHostVersion', () => {
  it('accepts a host version inside the range and refuses one outside it', () => {
    const manifest = parseModManifest(valid);
    expect([supportsHostVersion(manifest, '0.4.2'), supportsHostVersion(manifest, '1.0.0')]).toEqual([true, false]);
  });

  it('accepts every host version when the mod names no range', () => {
    expect(supportsHostVersion({ toolboxVersion: null }, '99.0.0')).toBe(true);
  });
});
