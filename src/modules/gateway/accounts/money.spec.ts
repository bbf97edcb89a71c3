import { resetDuration } from './gateway-rate-limit.guard.js';
import { costMicros, fromMicros, toMicros } from './money.js';

describe('money', () => {
  it('converts to and from integer micro-units', () => {
    expect(toMicros(0.06)).toBe(60_000);
    expect(fromMicros(60_000)).toBe(0.06);
    expect(toMicros(0.1) + toMicros(0.2)).toBe(toMicros(0.3));
  });

  it('costs tokens at prices per 1,000, rounding a fraction of a micro-unit up', () => {
    expect(costMicros({ input_per_1k: 1, output_per_1k: 2 }, 3, 4)).toBe(11_000);
    expect(costMicros({ input_per_1k: 0.0005, output_per_1k: 0.0015 }, 1, 0)).toBe(1);
    expect(costMicros({ input_per_1k: 0.0005, output_per_1k: 0.0015 }, 2, 0)).toBe(1);
    expect(costMicros({ input_per_1k: 0, output_per_1k: 0 }, 1000, 1000)).toBe(0);
  });
});

describe('resetDuration', () => {
  it('writes OpenAI reset durations', () => {
    expect(resetDuration(20)).toBe('20ms');
    expect(resetDuration(1500)).toBe('2s');
    expect(resetDuration(59_001)).toBe('1m0s');
    expect(resetDuration(125_000)).toBe('2m5s');
  });
});
