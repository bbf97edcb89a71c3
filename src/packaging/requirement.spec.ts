import { PlatformError } from '../common/errors.js';
import {
  isPrereleaseRange,
  isValidPackageName,
  normalizeHostVersion,
  normalizeRange,
  parseRequirement,
  satisfiesHost,
} from './requirement.js';
import { satisfies } from 'semver';

function rejection(input: Parameters<typeof parseRequirement>[0]): PlatformError {
  try {
    parseRequirement(input);
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe('parseRequirement', () => {
  describe('names and separators', () => {
    it('reads a bare name as any version', () => {
      expect(parseRequirement('y')).toEqual({ name: 'y', raw: 'y', writtenRange: '', range: '*' });
    });

    it('reads an operator glued to the name', () => {
      expect(parseRequirement('CloudM>=2.0.0')).toMatchObject({
        name: 'CloudM',
        range: '>=2.0.0',
        writtenRange: '>=2.0.0',
      });
    });

    it('reads a caret glued to the name', () => {
      expect(parseRequirement('lib^1.2')).toMatchObject({ name: 'lib', range: '>=1.2.0 <2.0.0-0' });
    });

    it('reads name@range', () => {
      expect(parseRequirement('name@^1.0.0')).toMatchObject({
        name: 'name',
        range: '>=1.0.0 <2.0.0-0',
        writtenRange: '^1.0.0',
      });
    });

    it('reads a range separated from the name by a space', () => {
      expect(parseRequirement('name ~1.4')).toMatchObject({ name: 'name', range: '>=1.4.0 <1.5.0-0' });
    });

    it('reads a pip-style parenthesised range', () => {
      expect(parseRequirement('name (>=1.0)')).toMatchObject({ name: 'name', range: '>=1.0.0', writtenRange: '>=1.0' });
    });

    it('accepts names with dots, underscores and hyphens', () => {
      expect(parseRequirement('my-mod.core_2>=1.0.0').name).toBe('my-mod.core_2');
    });

    it('accepts a name of exactly 100 characters', () => {
      expect(parseRequirement('a'.repeat(100)).name).toHaveLength(100);
    });

    it('keeps the written requirement trimmed as raw', () => {
      expect(parseRequirement('  lib >=1.0  ').raw).toBe('lib >=1.0');
    });

    it('treats "*" as any version', () => {
      expect(parseRequirement('lib*').range).toBe('*');
    });
  });

  describe('npm semver syntax', () => {
    it.each([
      ['lib^1.2.3', '>=1.2.3 <2.0.0-0'],
      ['lib^0.2.3', '>=0.2.3 <0.3.0-0'],
      ['lib~1.2.3', '>=1.2.3 <1.3.0-0'],
      ['lib>=1.2.3', '>=1.2.3'],
      ['lib<=1.2.3', '<=1.2.3'],
      ['lib>1.2.3', '>1.2.3'],
      ['lib<1.2.3', '<1.2.3'],
      ['lib 1.x', '>=1.0.0 <2.0.0-0'],
      ['lib 1.2.X', '>=1.2.0 <1.3.0-0'],
      ['lib 1.*', '>=1.0.0 <2.0.0-0'],
      ['lib x', '*'],
      ['lib 1.0.0 - 2.0.0', '>=1.0.0 <=2.0.0'],
      ['lib 1.0 - 2.0', '>=1.0.0 <2.1.0-0'],
      ['lib >=1.0.0 <2.0.0', '>=1.0.0 <2.0.0'],
      ['lib >=1 <2 || >=3', '>=1.0.0 <2.0.0-0||>=3.0.0'],
      ['lib ^1.0.0 || ^2.0.0', '>=1.0.0 <2.0.0-0||>=2.0.0 <3.0.0-0'],
      ['lib >= 1.0.0', '>=1.0.0'],
    ])('normalizes %s to %s', (input, range) => {
      expect(parseRequirement(input).range).toBe(range);
    });

    it('reads npm "=1.0" as the 1.0.x range, not a pin', () => {
      const requirement = parseRequirement('lib=1.0');
      expect(requirement.range).toBe('>=1.0.0 <1.1.0-0');
      expect(requirement).not.toHaveProperty('exact');
    });

    it('reads a bare partial version as an x-range, not a pin', () => {
      const requirement = parseRequirement('lib 1.2');
      expect(requirement.range).toBe('>=1.2.0 <1.3.0-0');
      expect(requirement).not.toHaveProperty('exact');
    });
  });

  describe('pins', () => {
    it('pins with ==', () => {
      expect(parseRequirement('x==1.0.0')).toMatchObject({ name: 'x', range: '1.0.0', exact: '1.0.0' });
    });

    it('pins with a single = and a full version', () => {
      expect(parseRequirement('x=1.0.0')).toMatchObject({ range: '1.0.0', exact: '1.0.0' });
    });

    it('pins with a bare full version', () => {
      expect(parseRequirement('x 1.0.0').exact).toBe('1.0.0');
    });

    it('pins with name@version', () => {
      expect(parseRequirement('x@2.1.0').exact).toBe('2.1.0');
    });

    it('pads a partial == pin with zeros, as pip does', () => {
      expect(parseRequirement('x==1.0')).toMatchObject({ range: '1.0.0', exact: '1.0.0' });
    });

    it('pins a prerelease', () => {
      expect(parseRequirement('x==2.0.0-beta.1')).toMatchObject({ range: '2.0.0-beta.1', exact: '2.0.0-beta.1' });
    });

    it('strips a leading v from a pinned version', () => {
      expect(parseRequirement('x==v1.2.3').exact).toBe('1.2.3');
    });

    it("reads pip's ==1.0.* wildcard as a range, not a pin", () => {
      const requirement = parseRequirement('x==1.0.*');
      expect(requirement.range).toBe('>=1.0.0 <1.1.0-0');
      expect(requirement).not.toHaveProperty('exact');
    });

    it('does not call a range a pin', () => {
      expect(parseRequirement('x>=1.0.0').exact).toBeUndefined();
    });
  });

  describe('comma-separated sets and pip operators', () => {
    it('reads a comma-separated set as AND', () => {
      expect(parseRequirement('a>=1.0,<2.0')).toMatchObject({ range: '>=1.0.0 <2.0.0-0', writtenRange: '>=1.0,<2.0' });
    });

    it('accepts spaces around commas', () => {
      expect(parseRequirement('a >=1.0 , <2.0').range).toBe('>=1.0.0 <2.0.0-0');
    });

    it('combines a comma set with ||', () => {
      expect(parseRequirement('a>=1.0,<2.0 || >=3.0').range).toBe('>=1.0.0 <2.0.0-0||>=3.0.0');
    });

    it('excludes one version with !=', () => {
      const { range } = parseRequirement('a>=1.0,!=1.5.0,<2');
      expect([satisfies('1.4.0', range), satisfies('1.5.0', range), satisfies('1.6.0', range)]).toEqual([
        true,
        false,
        true,
      ]);
    });

    it("reads pip's compatible release ~=1.4 as >=1.4 <2", () => {
      expect(parseRequirement('a~=1.4').range).toBe('>=1.4.0 <2.0.0-0');
    });

    it("reads pip's compatible release ~=1.4.2 as >=1.4.2 <1.5", () => {
      expect(parseRequirement('a~=1.4.2').range).toBe('>=1.4.2 <1.5.0-0');
    });
  });

  describe('object form', () => {
    it('reads {name, version}', () => {
      expect(parseRequirement({ name: 'lib', version: '^1.0.0' })).toEqual({
        name: 'lib',
        raw: 'lib@^1.0.0',
        writtenRange: '^1.0.0',
        range: '>=1.0.0 <2.0.0-0',
      });
    });

    it('reads a missing version as any version', () => {
      expect(parseRequirement({ name: 'lib' })).toMatchObject({ raw: 'lib', range: '*' });
    });

    it('reads "latest" as any version', () => {
      expect(parseRequirement({ name: 'lib', version: 'latest' }).range).toBe('*');
    });

    it('pins an exact version', () => {
      expect(parseRequirement({ name: 'lib', version: '1.0.0' }).exact).toBe('1.0.0');
    });

    it('accepts comma sets in the version', () => {
      expect(parseRequirement({ name: 'lib', version: '>=1.0,<2.0' }).range).toBe('>=1.0.0 <2.0.0-0');
    });

    it('writes raw so that it parses back to the same requirement', () => {
      const first = parseRequirement({ name: 'lib', version: '~1.4' });
      expect(parseRequirement(first.raw)).toEqual(first);
    });

    it('rejects a bad name in the object form', () => {
      expect(rejection({ name: 'bad name', version: '1.0.0' }).message).toContain('"bad name@1.0.0"');
    });

    it('rejects a non-string version', () => {
      expect(rejection({ name: 'lib', version: 5 as unknown as string }).code).toBe('BAD_REQUEST');
    });
  });

  describe('malformed requirements', () => {
    it.each([
      ['', 'empty requirement'],
      ['   ', 'empty requirement'],
      ['lib^^1', 'not a valid version range'],
      ['lib>=foo', 'not a valid version range'],
      ['lib 1.2.3.4', 'not a valid version range'],
      ['lib >=1.0.0 garbage', 'not a valid version range'],
      ['-lib', 'must start with a letter or digit'],
      ['.lib', 'must start with a letter or digit'],
      ['lib/x', 'unexpected character "/"'],
      ['lib@', 'missing version range'],
      ['lib>=1.0,', 'empty comparator'],
      ['lib>=1.0,,<2', 'empty comparator'],
      ['lib >=1 ||', 'empty alternative'],
      ['lib>=2,<1', 'matches no version'],
      ['lib ~=1', 'needs at least major.minor'],
      ['lib==abc', 'does not name a version'],
      ['lib!=1.x.y', 'does not name a version'],
      ['a'.repeat(101), 'longer than 100 characters'],
    ])('rejects %j (%s)', (input, reason) => {
      const error = rejection(input);
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message).toContain(reason);
    });

    it('names the requirement in the message', () => {
      expect(rejection('lib^^1').message).toBe('Invalid requirement "lib^^1": "^^1" is not a valid version range');
    });

    it('is a 400', () => {
      expect(rejection('lib^^1').status).toBe(400);
    });

    it('rejects a requirement longer than 1000 characters without echoing all of it', () => {
      const error = rejection(`lib ${'>=1.0.0 '.repeat(200)}`);
      expect(error.message.length).toBeLessThan(200);
    });

    it('rejects an input that is neither a string nor an object with a name', () => {
      expect(rejection(42 as unknown as string).code).toBe('BAD_REQUEST');
    });
  });
});

describe('normalizeRange', () => {
  it('returns * for an empty range', () => {
    expect(normalizeRange('')).toEqual({ range: '*' });
  });

  it('returns the pin for ==', () => {
    expect(normalizeRange('==1.2.3')).toEqual({ range: '1.2.3', exact: '1.2.3' });
  });

  it('normalizes a comma set', () => {
    expect(normalizeRange('>=0.1.20,<1.0')).toEqual({ range: '>=0.1.20 <1.0.0-0' });
  });

  it('rejects a malformed range with a 400 naming it', () => {
    expect(() => normalizeRange('>=banana')).toThrow(
      new PlatformError('BAD_REQUEST', 'Invalid version range ">=banana": ">=banana" is not a valid version range'),
    );
  });
});

describe('isValidPackageName', () => {
  it.each(['a', 'CloudM', 'my-mod', 'lib.core', 'x_1', '9lives'])('accepts %s', (name) => {
    expect(isValidPackageName(name)).toBe(true);
  });

  it.each(['', '-a', '_a', 'a b', 'a/b', 'ä', 'a'.repeat(101)])('rejects %j', (name) => {
    expect(isValidPackageName(name)).toBe(false);
  });
});

describe('isPrereleaseRange', () => {
  it.each([
    '>=2.0.0-beta',
    '^1.0.0-0',
    '~1.2.3-rc.1',
    '==2.0.0-beta.1',
    '1.0.0 - 2.0.0-rc.1',
    '>=1.0.0 <2.0.0 || >=3.0.0-alpha',
  ])('says %s names a prerelease', (range) => {
    expect(isPrereleaseRange(range)).toBe(true);
  });

  it.each(['*', '^1.2', '~1.4', '>=1.0,<2.0', '1.x', '<2.0.0-0', 'not a range'])(
    'says %s names no prerelease',
    (range) => {
      expect(isPrereleaseRange(range)).toBe(false);
    },
  );
});

describe('normalizeHostVersion', () => {
  it('pads a partial version', () => {
    expect(normalizeHostVersion('1.5')).toBe('1.5.0');
  });

  it('keeps a prerelease', () => {
    expect(normalizeHostVersion('2.0.0-beta.1')).toBe('2.0.0-beta.1');
  });

  it('rejects a non-version with a 400 naming it', () => {
    expect(() => normalizeHostVersion('latest')).toThrow('Invalid toolbox_version "latest"');
  });
});

describe('satisfiesHost', () => {
  it('accepts any host when the range is null', () => {
    expect(satisfiesHost(null, '1.5.0')).toBe(true);
  });

  it('accepts any host when the range is empty', () => {
    expect(satisfiesHost('  ', '1.5.0')).toBe(true);
  });

  it('accepts a host inside the range', () => {
    expect(satisfiesHost('>=1.0.0 <2.0.0', '1.5.0')).toBe(true);
  });

  it('rejects a host outside the range', () => {
    expect(satisfiesHost('>=2.0.0', '1.5.0')).toBe(false);
  });

  it('understands comma sets in the stored range', () => {
    expect(satisfiesHost('>=0.1.20,<1.0', '0.1.25')).toBe(true);
  });

  it('accepts a partial host version', () => {
    expect(satisfiesHost('^1.4', '1.5')).toBe(true);
  });

  it('lets a prerelease host satisfy a release range', () => {
    expect(satisfiesHost('>=1.0.0', '2.0.0-beta.1')).toBe(true);
  });

  it('admits nothing for an unparseable stored range', () => {
    expect(satisfiesHost('whenever', '1.5.0')).toBe(false);
  });
});
