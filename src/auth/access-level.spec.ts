import { ACCESS_LEVEL, accessLevelName, hasAccessLevel, isAccessLevel } from './access-level.js';

const { ADMIN, NOT_LOGGED_IN, LOGGED_IN, TRUSTED } = ACCESS_LEVEL;

describe('hasAccessLevel', () => {
  // Every (caller, required) pair of the four named levels: admin passes everything, nothing but admin
  // passes admin, the rest compare by number.
  const pairs: Array<[number, number, boolean]> = [
    [ADMIN, ADMIN, true],
    [ADMIN, NOT_LOGGED_IN, true],
    [ADMIN, LOGGED_IN, true],
    [ADMIN, TRUSTED, true],
    [NOT_LOGGED_IN, ADMIN, false],
    [NOT_LOGGED_IN, NOT_LOGGED_IN, true],
    [NOT_LOGGED_IN, LOGGED_IN, false],
    [NOT_LOGGED_IN, TRUSTED, false],
    [LOGGED_IN, ADMIN, false],
    [LOGGED_IN, NOT_LOGGED_IN, true],
    [LOGGED_IN, LOGGED_IN, true],
    [LOGGED_IN, TRUSTED, false],
    [TRUSTED, ADMIN, false],
    [TRUSTED, NOT_LOGGED_IN, true],
    [TRUSTED, LOGGED_IN, true],
    [TRUSTED, TRUSTED, true],
  ];

  it.each(pairs)('caller %i against required %i gives %s', (caller, required, expected) => {
    expect(hasAccessLevel(caller, required)).toBe(expected);
  });

  it('covers all sixteen pairs of the four levels', () => {
    expect(new Set(pairs.map(([caller, required]) => `${caller}/${required}`)).size).toBe(16);
  });

  it('lets an admin (-1) pass levels above the seed table (functions may ask for 5)', () => {
    expect(hasAccessLevel(ADMIN, 5)).toBe(true);
    expect(hasAccessLevel(TRUSTED, 5)).toBe(false);
  });
});

describe('access level names', () => {
  it('names the four seed levels and nothing else', () => {
    expect([ADMIN, NOT_LOGGED_IN, LOGGED_IN, TRUSTED].map(accessLevelName)).toEqual([
      'ADMIN',
      'NOT_LOGGED_IN',
      'LOGGED_IN',
      'TRUSTED',
    ]);
    expect(accessLevelName(7)).toBe('7');
    expect([isAccessLevel(-1), isAccessLevel(2), isAccessLevel(3), isAccessLevel('1')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
