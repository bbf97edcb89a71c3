import { readFile } from 'node:fs/promises';
import type { WorkerType } from './worker-manager.js';

/** One worker's figures as the admin API shows them (WorkerInfo.metrics). */
export interface WorkerMetricsView {
  requests: number;
  /** HTTP: requests in flight now; WS: open connections. */
  connections: number;
  errors: number;
  avg_latency_ms: number;
  /** Resident memory of the worker process (Linux `/proc`), null where unknown. */
  memory_mb: number | null;
}

/** Maps a worker's own `GET /metrics` answer (HTTP or WS worker) to the manager's view. */
export function metricsViewOf(
  type: WorkerType,
  body: Record<string, unknown>,
  memoryMb: number | null,
): WorkerMetricsView {
  const number = (key: string) => (typeof body[key] === 'number' ? (body[key] as number) : 0);
  if (type === 'http')
    return {
      requests: number('requests_total'),
      connections: number('in_flight'),
      errors: number('requests_error'),
      avg_latency_ms: number('avg_latency_ms'),
      memory_mb: memoryMb,
    };
  return {
    requests: number('messages_received'),
    connections: number('connections'),
    errors: number('handler_errors'),
    avg_latency_ms: 0,
    memory_mb: memoryMb,
  };
}

/** `VmRSS` of a process in MiB, or null (not Linux, or the process is gone). */
export async function residentMemoryMb(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/** One collection from one worker: `GET /metrics` within 2 s; null when it does not answer. */
export async function collectWorkerMetrics(
  host: string,
  port: number,
  type: WorkerType,
  pid: number,
): Promise<WorkerMetricsView | null> {
  try {
    const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`, {
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return null;
    return metricsViewOf(type, (await response.json()) as Record<string, unknown>, await residentMemoryMb(pid));
  } catch {
    return null;
  }
}

/**
 * How many requests a reverse proxy has sent an HTTP worker (`requests_proxied` of its `GET /metrics`), or null when
 * it does not answer within 1 s. A count above 0 shows that nginx has chosen the worker's port.
 */
export async function proxiedRequests(host: string, port: number): Promise<number | null> {
  try {
    const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`, {
      signal: AbortSignal.timeout(1_000),
    });
    if (!response.ok) return null;
    const body = (await response.json()) as { requests_proxied?: unknown };
    return typeof body.requests_proxied === 'number' ? body.requests_proxied : null;
  } catch {
    return null;
  }
}
