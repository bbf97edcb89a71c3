import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the code running now belongs to: the request (its id, which every log line carries) and the caller of the
 * application-core function running, if any (app-core's caller.ts reads and sets it). One store for both: once a
 * store is in use Node copies each store onto every promise and async resource created, so two stores cost every
 * one of them twice.
 */
export interface ExecutionContext {
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

/** The last context a caller run made: a run of the same caller in the same request reuses it (contexts never change). */
let lastCallerContext: ExecutionContext = { requestId: undefined, caller: undefined };

/** What `enterContextCaller` returns when the current context already has the caller: there is nothing to restore. */
const UNCHANGED: ExecutionContext = Object.freeze({ requestId: undefined, caller: undefined });

/**
 * Makes `caller` the current caller, in the current request, for the code that runs until `restoreContext` and for
 * everything that code schedules (promises, timers, async resources copy the context when they are created). Returns
 * what `restoreContext` needs; call it in a `finally`, in the same synchronous turn. A nested run by the same caller (a
 * mod calling another function as its own caller) is already in that context and enters none.
 *
 * This is `AsyncLocalStorage.run` split in two: `run` sets the store on the current async resource, calls its callback
 * and puts the previous store back, which is what `enterWith` here and `enterWith(previous)` in `restoreContext` do,
 * without the closure per call, `run`'s own `getStore` and its rest-argument `Reflect.apply` (under callgrind `run`
 * with its closure took about 300 instructions a call, the pair about 160; docs/app-core.md). That equivalence is
 * Node 20's `AsyncLocalStorage` (this platform's runtime); where it is built on `AsyncContextFrame` (Node 24) the
 * restore makes a frame with this store put back instead of reinstating the whole prior frame, which differs only
 * for another storage's `enterWith` made inside the run.
 */
export function enterContextCaller(caller: object): ExecutionContext | undefined {
  const current = storage.getStore();
  if (current !== undefined && current.caller === caller) return UNCHANGED;
  const requestId = current?.requestId;
  if (lastCallerContext.caller !== caller || lastCallerContext.requestId !== requestId)
    lastCallerContext = { requestId, caller };
  storage.enterWith(lastCallerContext);
  return current;
}

/** Puts back the context `enterContextCaller` replaced (its return value). */
export function restoreContext(previous: ExecutionContext | undefined): void {
  if (previous !== UNCHANGED) storage.enterWith(previous as ExecutionContext);
}

/**
 * Runs `body` with `caller` as the current caller, in the current request, for its synchronous code and everything it
 * schedules (`enterContextCaller` and `restoreContext` around it).
 */
export function runWithContextCaller<T>(caller: object, body: () => T): T {
  const previous = enterContextCaller(caller);
  try {
    return body();
  } finally {
    restoreContext(previous);
  }
}
