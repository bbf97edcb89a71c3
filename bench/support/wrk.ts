import { spawnSync } from 'node:child_process';

/** What one wrk run printed (`wrk --latency`): totals, latency percentiles in ms, and its error counts. */
export interface WrkFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  socketErrors: number;
}

/** Whether wrk is installed (`apt-get install wrk`): a separate load generator that charges no Node CPU to the server. */
export function wrkInstalled(): boolean {
  return spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
}

export function parseWrkOutput(output: string): WrkFigures {
  const milliseconds = (label: string) => {
    const match = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(output);
    return match ? Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[match[2]] : NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? 0),
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0),
    p50: milliseconds('50'),
    p99: milliseconds('99'),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((total, value) => total + Number(value), 0) : 0,
  };
}
