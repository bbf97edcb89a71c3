/** Counters for `/status` and `toolbox://performance` (this process). */
export class McpStats {
  private readonly started = Date.now();
  requests = 0;
  errors = 0;
  toolCalls = 0;
  toolErrors = 0;
  cacheHits = 0;
  cacheMisses = 0;
  private totalLatencyMs = 0;

  recordRequest(latencyMs: number, failed: boolean): void {
    this.requests += 1;
    this.totalLatencyMs += latencyMs;
    if (failed) this.errors += 1;
  }

  recordCall(_latencyMs: number, failed: boolean): void {
    this.toolCalls += 1;
    if (failed) this.toolErrors += 1;
  }

  uptimeSeconds(): number {
    return Math.round((Date.now() - this.started) / 100) / 10;
  }

  snapshot(): Record<string, number> {
    const lookups = this.cacheHits + this.cacheMisses;
    return {
      request_count: this.requests,
      average_latency_ms: this.requests ? Math.round((this.totalLatencyMs / this.requests) * 100) / 100 : 0,
      error_count: this.errors,
      tool_calls: this.toolCalls,
      tool_errors: this.toolErrors,
      cache_hit_rate: lookups ? Math.round((this.cacheHits / lookups) * 1000) / 1000 : 0,
    };
  }
}
