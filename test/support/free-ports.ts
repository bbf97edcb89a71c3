import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a TCP port on loopback accepts a listener right now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The first port the kernel hands out to outgoing connections (Linux: 32768 by default). A port chosen at or above
 * it can be taken by any connection opened between the check and the listener's start (a database pool's, seen
 * once in CI: a worker then failed with EADDRINUSE at every restart), so test listeners stay below it.
 */
function ephemeralPortsStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * Ports handed out in this test run, shared by the Jest workers (children of one Jest process): a port free when
 * checked is not yet listened on, so two suites starting side by side could both pick it (seen in CI: a worker
 * failed with EADDRINUSE at every restart). A port is reserved by creating its entry here, which only one
 * process can do, and stays reserved for the run.
 */
const reservations = join(tmpdir(), `tb-test-ports-${process.env.JEST_WORKER_ID ? process.ppid : process.pid}`);

function reserve(port: number): boolean {
  try {
    mkdirSync(reservations, { recursive: true });
    mkdirSync(join(reservations, String(port)));
    return true;
  } catch {
    return false;
  }
}

/** `count` consecutive free ports (worker port slots must be consecutive), below the outgoing connections' ports. */
export async function freePortRange(count: number): Promise<number> {
  const lowest = 10_000;
  const span = ephemeralPortsStart() - count - lowest;
  for (;;) {
    const base = lowest + Math.floor(Math.random() * span);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await portFree(base + i);
    // Reserved ports of a failed attempt stay reserved: the run has thousands to spare.
    for (let i = 0; i < count && ok; i++) ok = reserve(base + i);
    if (ok) return base;
  }
}
