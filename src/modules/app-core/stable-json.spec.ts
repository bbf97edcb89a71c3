import { stableStringify } from './stable-json.js';

describe('stableStringify', () => {
  it('gives the same text for objects whose keys are in another order', () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: 3 } })).toBe(stableStringify({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('distinguishes different values', () => {
    expect(stableStringify([1, '1'])).not.toBe(stableStringify([1, 1]));
  });

  it('drops undefined members and keeps array positions', () => {
    expect(stableStringify({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });
});
