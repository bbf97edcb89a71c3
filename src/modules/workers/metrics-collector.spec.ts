import { metricsViewOf, residentMemoryMb } from './metrics-collector.js';

describe('metrics collector mapping', () => {
  it("maps an HTTP worker's counters", () => {
    expect(
      metricsViewOf('http', { requests_total: 12, requests_error: 2, in_flight: 1, avg_latency_ms: 3.5 }, 80),
    ).toEqual({ requests: 12, connections: 1, errors: 2, avg_latency_ms: 3.5, memory_mb: 80 });
  });

  it("maps a WS worker's counters", () => {
    expect(metricsViewOf('ws', { messages_received: 9, connections: 4, handler_errors: 1 }, null)).toEqual({
      requests: 9,
      connections: 4,
      errors: 1,
      avg_latency_ms: 0,
      memory_mb: null,
    });
  });

  it('reads the resident memory of a live process, null for a gone one', async () => {
    expect(await residentMemoryMb(process.pid)).toBeGreaterThan(1);
    expect(await residentMemoryMb(2 ** 22 + 12345)).toBeNull();
  });
});
