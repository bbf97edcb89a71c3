/**
 * The figures every bench prints from its samples: nearest-rank percentiles of an ascending list, and medians of
 * rounds.
 */

/** The sample at `fraction` (0.5 = p50, 0.99 = p99) of an ascending list; 0 for an empty list. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

/** Sorts `samples` ascending in place and returns them, ready for {@link percentile}. */
export function ascending(samples: number[]): number[] {
  return samples.sort((a, b) => a - b);
}

/** The middle value of `values` (the upper one of an even count), leaving `values` as it is. */
export function median(values: readonly number[]): number {
  return percentile(ascending([...values]), 0.5);
}

/** Requests, requests/s, p50 and p99 of one closed-loop load (latencies in ms, sorted here) over `seconds`. */
export function loadFigures(
  latencies: number[],
  seconds: number,
): { requests: number; rps: number; p50: number; p99: number } {
  ascending(latencies);
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}
