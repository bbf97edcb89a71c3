import { hasAccessLevel } from './access-level.js';

describe('hasAccessLevel', () => {
  it('lets an admin (-1) call functions of every level', () => {
    expect([0, 1, 2, 5, -1].every((required) => hasAccessLevel(-1, required))).toBe(true);
  });

  it('refuses admin-only functions to trusted callers', () => {
    expect(hasAccessLevel(2, -1)).toBe(false);
  });

  it('compares non-admin levels by number', () => {
    expect(hasAccessLevel(1, 1)).toBe(true);
    expect(hasAccessLevel(2, 1)).toBe(true);
    expect(hasAccessLevel(0, 1)).toBe(false);
  });
});
