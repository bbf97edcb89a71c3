export interface UsageRowForDay {
  createdAt: Date;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
}

export interface UsageDay {
  /** The UTC calendar day, `YYYY-MM-DD`. */
  date: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  costMicros: number;
}

/**
 * Usage per UTC calendar day over the last `days` days, oldest first, with a zero entry for every day without
 * calls (a chart then needs no gap filling, and the days are the same whatever the reader's time zone).
 */
export function usageByDay(rows: UsageRowForDay[], days: number, now = new Date()): UsageDay[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const entries = new Map<string, UsageDay>();
  for (let index = days - 1; index >= 0; index -= 1) {
    const date = new Date(today - index * 86_400_000).toISOString().slice(0, 10);
    entries.set(date, { date, requests: 0, prompt_tokens: 0, completion_tokens: 0, costMicros: 0 });
  }
  for (const row of rows) {
    const entry = entries.get(row.createdAt.toISOString().slice(0, 10));
    if (!entry) continue;
    entry.requests += 1;
    entry.prompt_tokens += row.promptTokens;
    entry.completion_tokens += row.completionTokens;
    entry.costMicros += row.costMicros;
  }
  return [...entries.values()];
}
