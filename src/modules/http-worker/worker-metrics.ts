import { Injectable } from '@nestjs/common';

/** The JSON answer of `GET /metrics`. */
export interface WorkerMetricsSnapshot {
  worker_id: string;
  pid: number;
  uptime_seconds: number;
  requests_total: number;
  /** Requests that came through a reverse proxy (X-Forwarded-For): the manager's sign that nginx sends here. */
  requests_proxied: number;
  requests_success: number;
  requests_error: number;
  requests_server_error: number;
  auth_failures: number;
  access_denials: number;
  in_flight: number;
  avg_latency_ms: number;
  draining: boolean;
}

/** Request counters of one worker process (the manager sums them over its workers). */
@Injectable()
export class WorkerMetrics {
  private readonly startedAt = Date.now();
  private total = 0;
  private proxied = 0;
  private success = 0;
  private error = 0;
  private serverError = 0;
  private authFailures = 0;
  private denials = 0;
  private latencySumMs = 0;

  /** One finished request: its status and how long it took. */
  record(status: number, durationMs: number): void {
    this.total += 1;
    this.latencySumMs += durationMs;
    if (status < 400) this.success += 1;
    else this.error += 1;
    if (status >= 500) this.serverError += 1;
    if (status === 401) this.authFailures += 1;
    if (status === 403) this.denials += 1;
  }

  /** A request arrived through a reverse proxy (counted on arrival: nginx has chosen this worker). */
  recordProxied(): void {
    this.proxied += 1;
  }

  snapshot(state: { workerId: string; inFlight: number; draining: boolean }): WorkerMetricsSnapshot {
    return {
      worker_id: state.workerId,
      pid: process.pid,
      uptime_seconds: Math.floor((Date.now() - this.startedAt) / 1000),
      requests_total: this.total,
      requests_proxied: this.proxied,
      requests_success: this.success,
      requests_error: this.error,
      requests_server_error: this.serverError,
      auth_failures: this.authFailures,
      access_denials: this.denials,
      in_flight: state.inFlight,
      avg_latency_ms: this.total === 0 ? 0 : Math.round((this.latencySumMs / this.total) * 1000) / 1000,
      draining: state.draining,
    };
  }
}

const PROMETHEUS_METRICS: Array<{
  name: string;
  type: 'counter' | 'gauge';
  help: string;
  value: (snapshot: WorkerMetricsSnapshot) => number;
}> = [
  { name: 'tb_http_requests_total', type: 'counter', help: 'Requests answered', value: (s) => s.requests_total },
  {
    name: 'tb_http_requests_success_total',
    type: 'counter',
    help: 'Answers below 400',
    value: (s) => s.requests_success,
  },
  {
    name: 'tb_http_requests_error_total',
    type: 'counter',
    help: 'Answers of 400 and above',
    value: (s) => s.requests_error,
  },
  {
    name: 'tb_http_requests_server_error_total',
    type: 'counter',
    help: 'Answers of 500 and above',
    value: (s) => s.requests_server_error,
  },
  { name: 'tb_http_auth_failures_total', type: 'counter', help: '401 answers', value: (s) => s.auth_failures },
  {
    name: 'tb_http_requests_proxied_total',
    type: 'counter',
    help: 'Requests that came through a reverse proxy',
    value: (s) => s.requests_proxied,
  },
  { name: 'tb_http_access_denials_total', type: 'counter', help: '403 answers', value: (s) => s.access_denials },
  { name: 'tb_http_requests_in_flight', type: 'gauge', help: 'Requests being handled', value: (s) => s.in_flight },
  {
    name: 'tb_http_request_latency_avg_ms',
    type: 'gauge',
    help: 'Mean request latency in milliseconds',
    value: (s) => s.avg_latency_ms,
  },
  { name: 'tb_http_draining', type: 'gauge', help: '1 while the worker drains', value: (s) => (s.draining ? 1 : 0) },
  { name: 'tb_http_uptime_seconds', type: 'gauge', help: 'Seconds since start', value: (s) => s.uptime_seconds },
];

/** The snapshot in the Prometheus text exposition format (0.0.4), labelled with the worker id. */
export function prometheusText(snapshot: WorkerMetricsSnapshot): string {
  const labels = `{worker_id="${snapshot.worker_id.replace(/["\\\n]/g, '_')}"}`;
  const lines: string[] = [];
  for (const metric of PROMETHEUS_METRICS) {
    lines.push(`# HELP ${metric.name} ${metric.help}`, `# TYPE ${metric.name} ${metric.type}`);
    lines.push(`${metric.name}${labels} ${metric.value(snapshot)}`);
  }
  return `${lines.join('\n')}\n`;
}
