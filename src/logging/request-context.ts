import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `body` (and everything it awaits or schedules) as part of the request `requestId`. */
export function runInRequestContext<T>(requestId: string, body: () => T): T {
  return storage.run({ requestId }, body);
}

/** The id of the request being handled, or undefined outside one (start-up, jobs, timers). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
