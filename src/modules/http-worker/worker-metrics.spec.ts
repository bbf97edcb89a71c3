import { WorkerMetrics, prometheusText } from './worker-metrics.js';

describe('WorkerMetrics', () => {
  it('counts successes, errors, server errors, 401s and 403s, and averages the latency', () => {
    const metrics = new WorkerMetrics();
    for (const [status, ms] of [
      [200, 2],
      [302, 4],
      [401, 1],
      [403, 1],
      [404, 1],
      [500, 3],
      [499, 0],
    ] as const)
      metrics.record(status, ms);
    metrics.recordProxied();
    metrics.recordProxied();
    expect(metrics.snapshot({ workerId: 'w1', inFlight: 3, draining: true })).toMatchObject({
      worker_id: 'w1',
      requests_total: 7,
      requests_proxied: 2,
      requests_success: 2,
      requests_error: 5,
      requests_server_error: 1,
      auth_failures: 1,
      access_denials: 1,
      in_flight: 3,
      avg_latency_ms: 1.714,
      draining: true,
    });
  });

  it('writes the Prometheus text format with HELP, TYPE and an escaped worker label', () => {
    const metrics = new WorkerMetrics();
    metrics.record(200, 5);
    const text = prometheusText(metrics.snapshot({ workerId: 'w"1\\', inFlight: 0, draining: false }));
    expect(text).toContain('# HELP tb_http_requests_total Requests answered\n# TYPE tb_http_requests_total counter\n');
    expect(text).toContain('tb_http_requests_total{worker_id="w_1_"} 1\n');
    expect(text).toContain('tb_http_request_latency_avg_ms{worker_id="w_1_"} 5\n');
    expect(text).toContain('tb_http_draining{worker_id="w_1_"} 0\n');
    expect(text.endsWith('\n')).toBe(true);
  });
});
