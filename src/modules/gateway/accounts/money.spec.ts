import { resetDuration } from './gateway-rate-limit.guard.js';
import { affordableCompletionTokens, costMicros, fromMicros, toMicros } from './money.js';

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

describe('affordableCompletionTokens', () => {
  const price = { input_per_1k: 1, output_per_1k: 2 };

  it('gives the whole limit when the balance covers it', () => {
    expect(affordableCompletionTokens(price, 3, 10_000_000, 1024)).toBe(1024);
  });

  it('gives what the balance covers after the prompt, never costing more than it', () => {
    // 3 prompt tokens cost 3000 micros; each completion token 2000.
    expect(affordableCompletionTokens(price, 3, 9_999, 1024)).toBe(3);
    expect(affordableCompletionTokens(price, 3, 9_000, 1024)).toBe(3);
    expect(affordableCompletionTokens(price, 3, 8_999, 1024)).toBe(2);
    expect(costMicros(price, 3, affordableCompletionTokens(price, 3, 8_999, 1024))).toBeLessThanOrEqual(8_999);
  });

  it('gives 0 when the balance covers the prompt only, and -1 when not even that', () => {
    expect(affordableCompletionTokens(price, 3, 3_000, 1024)).toBe(0);
    expect(affordableCompletionTokens(price, 3, 2_999, 1024)).toBe(-1);
  });

  it('rounds like costMicros at prices of a fraction of a micro-unit a token', () => {
    const cheap = { input_per_1k: 0.0005, output_per_1k: 0.0015 };
    for (const available of [1, 2, 3, 10, 77]) {
      const tokens = affordableCompletionTokens(cheap, 2, available, 1_000_000);
      expect(costMicros(cheap, 2, tokens)).toBeLessThanOrEqual(available);
      expect(costMicros(cheap, 2, tokens + 1)).toBeGreaterThan(available);
    }
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
