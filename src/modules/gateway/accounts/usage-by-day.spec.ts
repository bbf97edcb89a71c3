import { usageByDay } from './usage-by-day.js';

const row = (iso: string, promptTokens = 1, completionTokens = 2, costMicros = 10) => ({
  createdAt: new Date(iso),
  promptTokens,
  completionTokens,
  costMicros,
});

describe('usageByDay', () => {
  const now = new Date('2026-03-10T08:00:00Z');

  it('lists every day of the window oldest first, zero where nothing was called', () => {
    expect(usageByDay([], 3, now)).toEqual([
      { date: '2026-03-08', requests: 0, prompt_tokens: 0, completion_tokens: 0, costMicros: 0 },
      { date: '2026-03-09', requests: 0, prompt_tokens: 0, completion_tokens: 0, costMicros: 0 },
      { date: '2026-03-10', requests: 0, prompt_tokens: 0, completion_tokens: 0, costMicros: 0 },
    ]);
  });

  it('sums the calls of each UTC day', () => {
    const days = usageByDay(
      [row('2026-03-09T23:59:59Z'), row('2026-03-10T00:00:00Z', 5, 6, 7), row('2026-03-10T07:00:00Z')],
      2,
      now,
    );
    expect(days).toEqual([
      { date: '2026-03-09', requests: 1, prompt_tokens: 1, completion_tokens: 2, costMicros: 10 },
      { date: '2026-03-10', requests: 2, prompt_tokens: 6, completion_tokens: 8, costMicros: 17 },
    ]);
  });

  it('leaves out calls before the first day of the window', () => {
    expect(usageByDay([row('2026-03-08T12:00:00Z')], 2, now).map((day) => day.requests)).toEqual([0, 0]);
  });
});
