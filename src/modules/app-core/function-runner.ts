import { hasAccessLevel } from './access-level.js';
import { callerProblem, currentCaller, enterCaller, leaveCaller, type Caller } from './caller.js';
import { FileFunctionCache, MemoryFunctionCache, callCacheKey } from './function-cache.js';
import { ArgumentError, NO_ARGUMENTS, bindArguments, type FunctionEntry } from './function-entry.js';
import type { FunctionRegistry, RegistryLogger } from './function-registry.js';
import { Result } from './result.js';

/** `Module.function` (also a string enum member with that value), or `[module, function]`. */
export type FunctionName = string | readonly [string, string];

export interface RunOptions {
  /** Positional arguments. */
  args?: readonly unknown[];
  /** Keyword arguments, mapped onto parameter names; an unknown name is an InputError. */
  kwargs?: Record<string, unknown>;
  /** Call the method on its mod instance (default true); a function's `state` option overrides this. */
  withState?: boolean;
  /** The app specification the call runs under; this core has one, `app` (default). */
  specification?: string;
  /** The HTTP request, passed as the `request` keyword to functions with `requestAsKwarg`. */
  request?: unknown;
  /**
   * Who calls (mandatory). Only `transport: 'local'` (LOCAL_CALLER) skips the level check; every
   * transport passes the level and user it authenticated. A call made from inside a running function
   * (a mod's `context.app`) without a caller runs as that function's caller; any other call without
   * one is refused (exec_code 403), never trusted.
   */
  caller: Caller;
}

export interface RunAnyOptions extends RunOptions {
  /** Return the Result instead of the bare data (default false). */
  getResults?: boolean;
}

export interface FunctionRunnerOptions {
  dataDir: string;
  virtualMode?: boolean;
  logger?: RegistryLogger;
}

/** exec_code of refusals: the caller's level is too low, or the app runs in virtual mode. */
export const EXEC_CODE_FORBIDDEN = 403;
/** exec_code of an unknown function. */
export const EXEC_CODE_NOT_FOUND = 404;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/**
 * Runs registered functions in process. Never throws: an unknown function is an InputError Result
 * (exec_code 404), bad arguments an InputError (-3), a refused call an InputError (403) and an
 * exception inside the function an InternalError (-2) carrying its message.
 */
export class FunctionRunner {
  readonly memoryCache = new MemoryFunctionCache();
  readonly fileCache: FileFunctionCache;
  private readonly virtualMode: boolean;
  private readonly runnerLogger: RegistryLogger | undefined;

  constructor(
    protected readonly registry: FunctionRegistry,
    runnerOptions: FunctionRunnerOptions,
  ) {
    this.fileCache = new FileFunctionCache(runnerOptions.dataDir);
    this.virtualMode = runnerOptions.virtualMode ?? false;
    this.runnerLogger = runnerOptions.logger;
  }

  /**
   * Runs a function. Synchronous when the function is synchronous and not file-cached (returns a
   * Result), otherwise a Promise of it; `await` works on both. A function registered with
   * `row: true` yields its raw value instead of a Result (errors are still Results); pass `T` to type it.
   */
  runFunction<T = Result>(name: FunctionName, options: RunOptions): T | Result | Promise<T | Result> {
    // Plain JavaScript (mods) can omit the options or the caller; the check below is what holds.
    options = (options as RunOptions | undefined) ?? ({} as RunOptions);
    const caller: Caller | undefined = options.caller ?? currentCaller();
    const problem = callerProblem(caller);
    if (problem !== undefined) return refused(name, problem);
    const entry = this.registry.get(typeof name === 'string' ? name : functionKey(name));
    if (entry === undefined) return notFound(name);
    if (options.specification !== undefined && options.specification !== 'app') {
      return unknownSpecification(options.specification);
    }
    if (entry.guarded) {
      const refusal = this.refusal(entry, caller!);
      if (refusal !== undefined) return refusal;
    }
    // The function and all it schedules run as `caller` (what a nested call without a caller runs as).
    const scope = enterCaller(caller!);
    try {
      // The common call takes its arguments as they came (see `FunctionEntry.direct`).
      if (entry.direct && options.kwargs === undefined)
        return this.invoke(entry, selfFor(entry, options), (options.args ?? NO_ARGUMENTS) as unknown[]) as T | Result;
      return this.runChecked<T>(entry, options);
    } finally {
      leaveCaller(scope);
    }
  }

  private runChecked<T>(entry: FunctionEntry, options: RunOptions): T | Result | Promise<T | Result> {
    let args = options.args;
    let kwargs = options.kwargs;
    let bound: unknown[];
    try {
      if (entry.options.preCompute !== null) [args, kwargs] = applyPreCompute(entry, args, kwargs);
      bound = bindArguments(entry, args, kwargs, options.request);
    } catch (error) {
      if (error instanceof ArgumentError) return Result.defaultUserError(error.message, -3);
      return this.failure(entry, error);
    }
    const self = selfFor(entry, options);
    if (entry.cache === null) return this.invoke(entry, self, bound) as T | Result | Promise<T | Result>;
    // The key uses the bound arguments, so `f(1)` and `f(value=1)` share an entry; never the request.
    const keyArguments =
      options.request !== undefined && entry.options.requestAsKwarg ? bindArguments(entry, args, kwargs) : bound;
    return this.invokeCached(entry, self, bound, callCacheKey(entry, keyArguments)) as T | Result | Promise<T | Result>;
  }

  /** `runFunction`, always awaited. */
  async aRunFunction<T = Result>(name: FunctionName, options: RunOptions): Promise<T | Result> {
    return await this.runFunction<T>(name, options);
  }

  /** Runs a function and returns its bare data (`Result.get()`), or the Result itself with `getResults`. */
  runAny(name: FunctionName, options: RunAnyOptions): unknown {
    const outcome = this.runFunction(name, options);
    const getResults = (options as RunAnyOptions | undefined)?.getResults === true;
    return isThenable(outcome) ? outcome.then((value) => unwrap(value, getResults)) : unwrap(outcome, getResults);
  }

  /** `runAny`, always awaited. */
  async aRunAny(name: FunctionName, options: RunAnyOptions): Promise<unknown> {
    return await this.runAny(name, options);
  }

  private refusal(entry: FunctionEntry, caller: Caller): Result | undefined {
    if (entry.options.restrictInVirtualMode && this.virtualMode) {
      return Result.defaultUserError(`${entry.key} is not available in virtual mode`, EXEC_CODE_FORBIDDEN);
    }
    if (caller.transport !== 'local' && !hasAccessLevel(caller.level, entry.options.level)) {
      return Result.defaultUserError(
        `insufficient access level: ${entry.key} needs level ${entry.options.level}`,
        EXEC_CODE_FORBIDDEN,
      );
    }
    return undefined;
  }

  private invoke(entry: FunctionEntry, self: object | undefined, bound: unknown[]): unknown {
    let value: unknown;
    try {
      value = callMethod(entry.method, self, bound);
    } catch (error) {
      return this.failure(entry, error);
    }
    return isThenable(value) ? this.settle(entry, value) : this.finish(entry, value);
  }

  private settle(entry: FunctionEntry, value: PromiseLike<unknown>): Promise<unknown> {
    return Promise.resolve(value).then(
      (resolved) => this.finish(entry, resolved),
      (error: unknown) => this.failure(entry, error),
    );
  }

  private finish(entry: FunctionEntry, value: unknown): unknown {
    const outcome = entry.options.row || value instanceof Result ? value : Result.ok(value);
    return entry.options.postCompute === null ? outcome : this.postComputed(entry, outcome);
  }

  private postComputed(entry: FunctionEntry, outcome: unknown): unknown {
    const row = entry.options.row;
    let computed: unknown;
    try {
      computed = entry.options.postCompute!(outcome);
    } catch (error) {
      return this.failure(entry, error);
    }
    const wrap = (final: unknown) => (row || final instanceof Result ? final : Result.ok(final));
    return isThenable(computed)
      ? Promise.resolve(computed).then(wrap, (error: unknown) => this.failure(entry, error))
      : wrap(computed);
  }

  private invokeCached(entry: FunctionEntry, self: object | undefined, bound: unknown[], key: string): unknown {
    if (entry.cache === 'memory') {
      const hit = this.memoryCache.get(entry, key);
      if (hit !== undefined) return hit.value;
      const outcome = this.invoke(entry, self, bound);
      const store = (value: unknown) => {
        if (!isErrorOutcome(value)) this.memoryCache.set(entry, key, value);
        return value;
      };
      return isThenable(outcome) ? Promise.resolve(outcome).then(store) : store(outcome);
    }
    return (async () => {
      const hit = await this.fileCache.get(entry, key);
      if (hit !== undefined) return hit.value;
      const outcome = await this.invoke(entry, self, bound);
      if (!isErrorOutcome(outcome)) {
        try {
          await this.fileCache.set(entry, key, outcome);
        } catch (error) {
          this.runnerLogger?.error(`file cache of ${entry.key} not written: ${(error as Error).message}`);
        }
      }
      return outcome;
    })();
  }

  private failure(entry: FunctionEntry, error: unknown): Result {
    const message = error instanceof Error ? error.message : String(error);
    this.runnerLogger?.error(
      `${entry.key} (${entry.source}) raised: ${message}`,
      error instanceof Error ? error.stack : undefined,
    );
    return Result.defaultInternalError(message, -2, { dataInfo: entry.key });
  }
}

/**
 * `method.apply(self, args)`: up to three arguments of an array by a plain call, which costs about a hundred
 * instructions less than `apply`'s generic spreading of an array-like (callgrind, docs/app-core.md). The same reads in
 * the same order (`length`, then each index), so holes, getters and proxies see what `apply` does; anything but an
 * array goes to `apply`.
 */
function callMethod(method: (...args: any[]) => unknown, self: object | undefined, args: unknown[]): unknown {
  if (Array.isArray(args)) {
    switch (args.length) {
      case 0:
        return method.call(self);
      case 1:
        return method.call(self, args[0]);
      case 2:
        return method.call(self, args[0], args[1]);
      case 3:
        return method.call(self, args[0], args[1], args[2]);
    }
  }
  return method.apply(self, args);
}

function applyPreCompute(
  entry: FunctionEntry,
  args: readonly unknown[] | undefined,
  kwargs: Record<string, unknown> | undefined,
): [unknown[] | undefined, Record<string, unknown> | undefined] {
  const rewritten = entry.options.preCompute!(args ? [...args] : [], kwargs ? { ...kwargs } : {});
  if (rewritten === undefined || rewritten === null) return [args as unknown[] | undefined, kwargs];
  if (Array.isArray(rewritten)) return [rewritten[0], rewritten[1]];
  return [rewritten.args ?? (args as unknown[] | undefined), rewritten.kwargs ?? kwargs];
}

function isErrorOutcome(value: unknown): boolean {
  return value instanceof Result && value.isError();
}

function functionKey(name: FunctionName): string {
  return typeof name === 'string' ? name : `${name[0]}.${name[1]}`;
}

/** The instance a call runs on: its mod's with `state: true`, or by default unless `withState: false`. */
function selfFor(entry: FunctionEntry, options: RunOptions): object | undefined {
  const state = entry.options.state;
  return state === true || (state === null && options.withState !== false) ? entry.instance : undefined;
}

function refused(name: FunctionName, problem: string): Result {
  return Result.defaultUserError(`refused: ${problem}`, EXEC_CODE_FORBIDDEN, { dataInfo: functionKey(name) });
}

function unknownSpecification(specification: string): Result {
  return Result.defaultUserError(`unknown specification '${specification}'`, -3);
}

function notFound(name: FunctionName): Result {
  const key = functionKey(name);
  return Result.defaultUserError('function not found', EXEC_CODE_NOT_FOUND, { dataInfo: key });
}

function unwrap(value: unknown, getResults: boolean): unknown {
  if (getResults) return value instanceof Result ? value : Result.ok(value);
  return value instanceof Result ? value.get() : value;
}
