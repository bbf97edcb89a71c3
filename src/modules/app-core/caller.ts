import { ACCESS_LEVEL } from '../../auth/principal.js';
import {
  contextCaller,
  enterContextCaller,
  restoreContext,
  runWithContextCaller,
  type ExecutionContext,
} from '../../logging/request-context.js';

/**
 * How a call reached the runner. Only `local` (the CLI's `tb functions run`, the function test run,
 * code of the core itself) is trusted in process; every other transport is checked against the
 * function's level.
 */
export type CallerTransport = 'local' | 'http' | 'ws' | 'mcp' | 'rpc' | (string & {});

/** Who runs a function: mandatory on every run, so a transport that forgets it is refused, not trusted. */
export interface Caller {
  /** Access level: -1 admin, 0 anonymous, 1 logged in, 2 trusted (see access-level.ts). */
  level: number;
  /** The platform user id, or null for an anonymous caller. */
  userId: string | null;
  transport: CallerTransport;
}

/** The in-process caller: the CLI and the core's own code. Never build it from a request. */
export const LOCAL_CALLER: Caller = Object.freeze({ level: ACCESS_LEVEL.ADMIN, userId: null, transport: 'local' });

/** An anonymous caller over `transport` (no credentials presented). */
export function anonymousCaller(transport: Exclude<CallerTransport, 'local'>): Caller {
  return { level: ACCESS_LEVEL.NOT_LOGGED_IN, userId: null, transport };
}

/** One of ACCESS_LEVEL's values, by comparisons: checked on every run, where a Set lookup cost more. */
function isValidLevel(level: unknown): boolean {
  return (
    level === ACCESS_LEVEL.ADMIN ||
    level === ACCESS_LEVEL.NOT_LOGGED_IN ||
    level === ACCESS_LEVEL.LOGGED_IN ||
    level === ACCESS_LEVEL.TRUSTED
  );
}

/** Why `value` is not a usable caller, or undefined when it is one. */
export function callerProblem(value: unknown): string | undefined {
  if (value === undefined || value === null) return 'no caller given';
  if (typeof value !== 'object') return 'caller is not an object';
  const caller = value as Partial<Caller>;
  if (typeof caller.transport !== 'string' || caller.transport.length === 0) return 'caller has no transport';
  if (!isValidLevel(caller.level)) return `caller level ${String(caller.level)} is not one of -1, 0, 1, 2`;
  if (caller.userId !== null && typeof caller.userId !== 'string') return 'caller userId must be a string or null';
  return undefined;
}

/**
 * The caller of the function running now (inside its synchronous body and its awaited continuations),
 * or undefined outside a run. A nested call a mod makes through `context.app` runs as this caller, so
 * an anonymous HTTP caller cannot reach an admin function through a mod that calls it. It rides in the
 * request's async context (logging/request-context.ts), one store for the request id and the caller.
 */
export function currentCaller(): Caller | undefined {
  return contextCaller() as Caller | undefined;
}

/** Runs `body` with `caller` as the current caller. */
export function runAsCaller<T>(caller: Caller, body: () => T): T {
  return runWithContextCaller(caller, body);
}

/** What `enterCaller` replaced, for `leaveCaller`. */
export type CallerScope = ExecutionContext | undefined;

/**
 * Makes `caller` the current caller until `leaveCaller(scope)`, which must follow in a `finally` in the same
 * synchronous turn: `runAsCaller` without a closure per call (the runner's path).
 */
export const enterCaller: (caller: Caller) => CallerScope = enterContextCaller;

/** Ends what `enterCaller` began. */
export const leaveCaller: (scope: CallerScope) => void = restoreContext;
