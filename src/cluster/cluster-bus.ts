import cluster from 'node:cluster';

/**
 * Messages between the worker processes of one clustered service (`tb registry --workers N`), relayed by
 * the primary. Outside a cluster every call is a no-op, so code can publish unconditionally.
 */
export interface BusMessage {
  tb: 'bus';
  channel: string;
  payload: unknown;
}

type Handler = (payload: unknown) => void;

const handlers = new Map<string, Set<Handler>>();
let listening = false;

export function inClusterWorker(): boolean {
  return cluster.isWorker && typeof process.send === 'function';
}

/** Tells every other worker of this service (not this one). */
export function publish(channel: string, payload: unknown): void {
  if (!inClusterWorker()) return;
  const message: BusMessage = { tb: 'bus', channel, payload };
  process.send!(message);
}

export function subscribe(channel: string, handler: Handler): void {
  if (!inClusterWorker()) return;
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      const bus = message as BusMessage;
      if (bus?.tb === 'bus') handlers.get(bus.channel)?.forEach((listener) => listener(bus.payload));
    });
  }
  let set = handlers.get(channel);
  if (!set) handlers.set(channel, (set = new Set()));
  set.add(handler);
}
