import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the code running now belongs to: the request (its id, which every log line carries) and the caller of the
 * application-core function running, if any (app-core's caller.ts reads and sets it). One store for both: once a
 * store is in use Node copies each store onto every promise and async resource created, so two stores cost every
 * one of them twice.
 */
interface ExecutionContext {
  readonly requestId: string | undefined;
  readonly caller: object | undefined;
}

const storage = new AsyncLocalStorage<ExecutionContext>();

/** Runs `body` (and everything it awaits or schedules) as part of the request `requestId`. */
export function runInRequestContext<T>(requestId: string, body: () => T): T {
  return storage.run({ requestId, caller: storage.getStore()?.caller }, body);
}

/** The id of the request being handled, or undefined outside one (start-up, jobs, timers). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** The caller of the application-core function running now (see app-core's `currentCaller`). */
export function contextCaller(): object | undefined {
  return storage.getStore()?.caller;
}

/** What `enterCaller` hands back for `leaveCaller`: the context to restore, or that none was entered. */
export type EnteredCaller = ExecutionContext | undefined | typeof NOTHING_ENTERED;
const NOTHING_ENTERED = Symbol('nothingEntered');

/** The last context `enterCaller` made: a run of the same caller in the same request reuses it (contexts never change). */
let lastEntered: ExecutionContext = { requestId: undefined, caller: undefined };

/**
 * Makes `caller` the current caller, in the current request, for the synchronous code that follows and everything
 * it schedules, until `leaveCaller` with what this returned (in a `finally`: what `AsyncLocalStorage.run` does,
 * without its closure and arguments array on every call of a function). A nested run by the same caller (a mod
 * calling another function as its own caller) is already in that context and enters nothing.
 */
export function enterCaller(caller: object): EnteredCaller {
  const current = storage.getStore();
  const requestId = current?.requestId;
  if (current !== undefined && current.caller === caller) return NOTHING_ENTERED;
  if (lastEntered.caller !== caller || lastEntered.requestId !== requestId) lastEntered = { requestId, caller };
  storage.enterWith(lastEntered);
  return current;
}

/** Restores the context `enterCaller` replaced. */
export function leaveCaller(entered: EnteredCaller): void {
  if (entered !== NOTHING_ENTERED) storage.enterWith(entered as ExecutionContext);
}

/** Runs `body` with `caller` as the current caller, in the current request. */
export function runWithContextCaller<T>(caller: object, body: () => T): T {
  const entered = enterCaller(caller);
  try {
    return body();
  } finally {
    leaveCaller(entered);
  }
}
