import { MiB, type EnvironmentReader, type WorkerPoolConfig } from './environment-reader.js';

/** The WebSocket worker (`tb worker ws`): connection and message limits, ping interval configurable for tests. */
export interface WsWorkerConfig extends WorkerPoolConfig {
  /** WS_MAX_CONNECTIONS: connections beyond it are closed with 1013 (default 10,000). */
  maxConnections: number;
  /** WS_MAX_CONNECTIONS_PER_IP: connections of one client address (an IPv6 client: its /64) (default 100). */
  maxConnectionsPerIp: number;
  /** WS_MAX_CONNECTIONS_PER_USER: connections of one signed-in user, from any address (default 20). */
  maxConnectionsPerUser: number;
  /**
   * WS_ANONYMOUS_MAX_PERCENT: the share of WS_MAX_CONNECTIONS connections without a signed-in user may take
   * (default 80: the last 20 % wait for signed-in users).
   */
  anonymousMaxPercent: number;
  /** WS_MAX_MESSAGE_BYTES: a larger frame closes the connection with 1009 (default 1 MiB). */
  maxMessageBytes: number;
  /** WS_PING_INTERVAL_SECONDS: ping every connection; one that has not answered the previous ping is dropped (30). */
  pingIntervalSeconds: number;
}

// Behind the reverse proxy like the HTTP workers: loopback unless told otherwise.
export function readWsWorkerSection(read: EnvironmentReader): WsWorkerConfig {
  return {
    ...read.workerPool('WS_WORKER', 8100, 1),
    maxConnections: read.integer('WS_MAX_CONNECTIONS', 10_000, { min: 1 }),
    maxConnectionsPerIp: read.integer('WS_MAX_CONNECTIONS_PER_IP', 100, { min: 1 }),
    maxConnectionsPerUser: read.integer('WS_MAX_CONNECTIONS_PER_USER', 20, { min: 1 }),
    anonymousMaxPercent: read.integer('WS_ANONYMOUS_MAX_PERCENT', 80, { min: 0, max: 100 }),
    maxMessageBytes: read.integer('WS_MAX_MESSAGE_BYTES', MiB, { min: 1 }),
    pingIntervalSeconds: read.number('WS_PING_INTERVAL_SECONDS', 30, { min: 0.01 }),
  };
}
