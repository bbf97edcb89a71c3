import { PlatformError } from '../../common/errors.js';

export interface NetworkProbeOptions {
  /** PLATFORM_BASE: host tried on :5000, :8001 and PLATFORM_BASE_PORT (default `localhost`). */
  platformBase?: string;
  /** PLATFORM_BASE_PORT. */
  platformBasePort?: number | string;
  /** PLATFORM_REMOTE_BASE: the fallback address when no local candidate answers. */
  platformRemoteBase?: string;
  fetch?: typeof fetch;
}

/** Budget of one candidate during base selection: 0.5 s, so that trying three candidates stays quick. */
export const CANDIDATE_TIMEOUT_MS = 500;
/** Budget of the geolocation request: 3 s. */
export const GEO_TIMEOUT_MS = 3000;
/** Round trips averaged by one `ping()`. */
export const PING_ROUND_TRIPS = 5;
/** Averages kept in `pingHistory`. */
export const PING_HISTORY_SIZE = 10;

export interface PingMeasurement {
  base: string;
  /** Average of the successful round trips in whole milliseconds. */
  average_ms: number;
  round_trips: number;
  /** The last (up to 10) averages, oldest first, including this one. */
  history_ms: number[];
}

/**
 * Finds a platform server to talk to and measures it. Base selection: try
 * `http://<PLATFORM_BASE>:5000`, then `:8001`, then `PLATFORM_BASE:PLATFORM_BASE_PORT`, each with a
 * 0.5 s budget for `GET /api/ping`; else use `PLATFORM_REMOTE_BASE`.
 */
export class NetworkProbe {
  private readonly fetchFunction: typeof fetch;
  private selectedBase: string | undefined;
  private readonly history: number[] = [];

  constructor(private readonly options: NetworkProbeOptions = {}) {
    this.fetchFunction = options.fetch ?? fetch;
  }

  /** The candidate addresses in the order they are tried (the remote fallback last). */
  candidates(): string[] {
    const host = this.options.platformBase?.replace(/^https?:\/\//, '').replace(/\/+$/, '') || 'localhost';
    const list = [`http://${host}:5000`, `http://${host}:8001`];
    const port = this.options.platformBasePort;
    if (port !== undefined && port !== '') list.push(`http://${host}:${port}`);
    return list;
  }

  /** Selects (once, then remembers) the base address; throws NOT_FOUND when nothing answers and no remote is set. */
  async base(options: { refresh?: boolean } = {}): Promise<string> {
    if (this.selectedBase && !options.refresh) return this.selectedBase;
    for (const candidate of this.candidates()) {
      if (await this.answers(candidate)) return (this.selectedBase = candidate);
    }
    const remote = this.options.platformRemoteBase?.replace(/\/+$/, '');
    if (!remote)
      throw new PlatformError('NOT_FOUND', 'No platform server answered and PLATFORM_REMOTE_BASE is not set');
    return (this.selectedBase = remote);
  }

  /** Averages up to 5 round trips of `GET /api/ping` to whole milliseconds; keeps the last 10 averages. */
  async ping(): Promise<PingMeasurement> {
    const base = await this.base();
    const durations: number[] = [];
    let lastError = '';
    for (let attempt = 0; attempt < PING_ROUND_TRIPS; attempt++) {
      const started = performance.now();
      try {
        const response = await this.fetchFunction(`${base}/api/ping`, { signal: AbortSignal.timeout(GEO_TIMEOUT_MS) });
        await response.arrayBuffer();
        if (!response.ok) {
          lastError = `HTTP ${response.status}`;
          continue;
        }
        durations.push(performance.now() - started);
      } catch (error) {
        lastError = (error as Error).message;
      }
    }
    if (durations.length === 0) throw new PlatformError('SERVICE_UNAVAILABLE', `ping ${base} failed: ${lastError}`);
    const average = Math.round(durations.reduce((sum, value) => sum + value, 0) / durations.length);
    this.history.push(average);
    if (this.history.length > PING_HISTORY_SIZE) this.history.splice(0, this.history.length - PING_HISTORY_SIZE);
    return { base, average_ms: average, round_trips: durations.length, history_ms: [...this.history] };
  }

  /** The kept ping averages, oldest first. */
  pingHistory(): number[] {
    return [...this.history];
  }

  /** `GET /api/geo` within 3 s; a reply carrying `error` (or a failed request) throws SERVICE_UNAVAILABLE. */
  async geo(): Promise<Record<string, unknown>> {
    const base = await this.base();
    let body: unknown;
    try {
      const response = await this.fetchFunction(`${base}/api/geo`, { signal: AbortSignal.timeout(GEO_TIMEOUT_MS) });
      body = await response.json();
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
    } catch (error) {
      throw new PlatformError('SERVICE_UNAVAILABLE', `geo ${base} failed: ${(error as Error).message}`);
    }
    if (body === null || typeof body !== 'object' || 'error' in body) {
      const reason =
        body && typeof body === 'object' ? String((body as Record<string, unknown>).error) : 'not a JSON object';
      throw new PlatformError('SERVICE_UNAVAILABLE', `geo ${base} failed: ${reason}`);
    }
    return body as Record<string, unknown>;
  }

  private async answers(candidate: string): Promise<boolean> {
    try {
      const response = await this.fetchFunction(`${candidate}/api/ping`, {
        signal: AbortSignal.timeout(CANDIDATE_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      return response.ok;
    } catch {
      return false;
    }
  }
}
