import { timeOrderedId } from './time-ordered-id.js';

describe('timeOrderedId', () => {
  it('makes version 7 UUIDs', () => {
    expect(timeOrderedId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts ids made in the same millisecond in creation order', () => {
    const now = Date.now() + 10_000;
    const ids = Array.from({ length: 50 }, () => timeOrderedId(now));
    expect([...ids].sort()).toEqual(ids);
  });

  it('sorts a later millisecond after an earlier one', () => {
    const first = timeOrderedId(Date.now() + 20_000);
    const second = timeOrderedId(Date.now() + 20_001);
    expect(second > first).toBe(true);
  });

  it('never goes backwards when the clock does', () => {
    const first = timeOrderedId(Date.now() + 30_000);
    const second = timeOrderedId(Date.now());
    expect(second > first).toBe(true);
  });
});
