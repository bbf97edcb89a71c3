export interface RestartBackoffOptions {
  /** Delay before the first restart (default 1 s). */
  initialDelayMs?: number;
  /** Each further crash in a row multiplies the delay by this (default 2). */
  factor?: number;
  /** The delay never exceeds this (default 30 s). */
  maxDelayMs?: number;
  /** A child that ran this long before crashing counts as healthy: the next delay starts over (default 60 s). */
  stablePeriodMs?: number;
}

/**
 * Exponential restart delays for one supervised slot: `initial · factor^n` capped at `max`, where n
 * counts the crashes in a row; a run of at least `stablePeriodMs` resets n, so a child that crashes once
 * a day restarts fast while a crash loop settles at one attempt per `maxDelayMs`.
 */
export class RestartBackoff {
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
  readonly stablePeriodMs: number;
  private crashesInARow = 0;

  constructor(options: RestartBackoffOptions = {}) {
    this.initialDelayMs = options.initialDelayMs ?? 1_000;
    this.factor = options.factor ?? 2;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.stablePeriodMs = options.stablePeriodMs ?? 60_000;
    if (
      !(this.initialDelayMs >= 0) ||
      !(this.factor >= 1) ||
      !(this.maxDelayMs >= this.initialDelayMs) ||
      !(this.stablePeriodMs >= 0)
    ) {
      throw new RangeError(
        'restart back-off needs initialDelayMs ≥ 0, factor ≥ 1, maxDelayMs ≥ initialDelayMs and stablePeriodMs ≥ 0',
      );
    }
  }

  /** The delay before restarting a child that crashed after running `uptimeMs`; counts the crash. */
  nextDelay(uptimeMs: number): number {
    if (uptimeMs >= this.stablePeriodMs) this.crashesInARow = 0;
    const delay = Math.min(this.initialDelayMs * this.factor ** this.crashesInARow, this.maxDelayMs);
    this.crashesInARow += 1;
    return delay;
  }

  /** Crashes counted since the last stable run. */
  get attempts(): number {
    return this.crashesInARow;
  }
}
