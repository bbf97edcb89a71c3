/**
 * Making a reverse proxy use new workers before anything relies on them.
 *
 * nginx counts a port that refused a connection as failed (`max_fails=1`) and forgets that only when a request to
 * it succeeds; meanwhile it lets one request per `fail_timeout` try the port. A worker that came up on such a port
 * with no traffic around stays "failed" in nginx's eyes, so once the other workers leave, a burst of concurrent
 * requests finds no port to try ("no live upstreams", 502). Requests sent one at a time through the proxy's front
 * door walk nginx's ring (least_conn with nothing in flight takes the ports in turn; a refusing one passes the
 * request on), so each new port soon answers one of them and counts as live again.
 */

export interface WarmUpTarget {
  id: string;
}

export interface WarmUpDeps<T extends WarmUpTarget> {
  /**
   * One idempotent request through the proxy's front door (never throws): true once the proxy answered, whatever
   * the status; false when it could not be reached (not running): then there is nothing to warm up.
   */
  send(): Promise<boolean>;
  /** How many requests the proxy has sent this worker (null: it did not answer). */
  proxiedCount(target: T): Promise<number | null>;
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface WarmUpOptions {
  /** Until the proxy has used each target, or one of them. */
  until: 'each' | 'one';
  /** Give up this long after the start: past `fail_timeout` and a margin the proxy tries every port anyway. */
  limitMs: number;
  /** Requests sent back to back before pacing: enough to go round the upstream's ports a couple of times. */
  burstRequests: number;
  /** Then one request per this interval (a port that refused moments ago is skipped until `fail_timeout`). */
  pauseMs: number;
}

export interface WarmUpResult<T extends WarmUpTarget> {
  /** Resolves when the proxy has used one of the targets, or when the warm-up ends without that. */
  first: Promise<void>;
  /**
   * Resolves after the back-to-back round of requests (or an earlier end). A target still unused then sits on a
   * port the proxy refused moments ago and skips for `fail_timeout`: only traffic does that, and it brings the proxy
   * back to the port as surely as the paced requests that go on.
   */
  round: Promise<void>;
  /** Resolves when the warm-up ends: with the targets the proxy has not used, and whether it was reachable. */
  done: Promise<{ unused: T[]; requestsSent: number; proxyReached: boolean }>;
}

/**
 * Sends requests one at a time through the proxy until each target's (or one target's) proxied count is above 0 (a fresh worker
 * process: above 0 means the proxy chose its port and the worker answered), bounded by `limitMs`.
 */
export function warmUp<T extends WarmUpTarget>(
  targets: readonly T[],
  deps: WarmUpDeps<T>,
  options: WarmUpOptions,
  stopped: () => boolean = () => false,
): WarmUpResult<T> {
  let markFirst!: () => void;
  let markRound!: () => void;
  const first = new Promise<void>((resolve) => (markFirst = resolve));
  const round = new Promise<void>((resolve) => (markRound = resolve));
  const done = (async () => {
    const pending = [...targets];
    const deadline = deps.now() + options.limitMs;
    let requestsSent = 0;
    let proxyReached = true;
    try {
      while (pending.length) {
        const counts = await Promise.all(pending.map((target) => deps.proxiedCount(target)));
        for (let index = pending.length - 1; index >= 0; index--)
          if ((counts[index] ?? 0) > 0) pending.splice(index, 1);
        if (pending.length < targets.length) markFirst();
        const enough = options.until === 'one' ? pending.length < targets.length : !pending.length;
        if (enough || stopped() || deps.now() >= deadline) break;
        proxyReached = await deps.send();
        requestsSent += 1;
        if (!proxyReached) break;
        if (requestsSent >= options.burstRequests) {
          markRound();
          await deps.sleep(Math.min(options.pauseMs, Math.max(0, deadline - deps.now())));
        }
      }
      return { unused: pending, requestsSent, proxyReached };
    } finally {
      markFirst();
      markRound();
    }
  })();
  return { first, round, done };
}
