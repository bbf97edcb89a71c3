import type { HttpMethod, JsonSchema, ResolvedExportOptions } from './export.decorator.js';
import { parseParameterSignature } from './parameter-names.js';

/**
 * One registered function: the bound method, its resolved options and what was precomputed at
 * registration so a call does no lookups beyond the registry map.
 */
export interface FunctionEntry {
  /** `Module.function`. */
  key: string;
  module: string;
  functionName: string;
  /** Where it is defined, `ClassName.methodName`, for start-up errors and listings. */
  source: string;
  instance: object;
  methodName: string;
  method: (...args: any[]) => unknown;
  options: ResolvedExportOptions;
  /** Parameter names (declared or read from the source). */
  parameters: string[];
  /** `object`: the function takes its keyword arguments as one destructured object. */
  parameterStyle: 'positional' | 'object';
  /** A rest parameter accepts keyword arguments it does not name. */
  acceptsAnyKeyword: boolean;
  /** Design-time parameter types emitted by TypeScript (`String`, `Number`, …) where available. */
  parameterTypes: string[] | null;
  schema: JsonSchema | null;
  /** True when the call needs the level, virtual-mode or state checks (kept off the fast path otherwise). */
  guarded: boolean;
  cache: 'memory' | 'file' | null;
  /**
   * Set at registration: positional parameters, no `preCompute`, no cache and no `requestAsKwarg`, so a call without
   * kwargs passes its `args` as they came (what `bindArguments` returns for it) and the runner skips the binding.
   */
  direct: boolean;
}

/** Raised by `bindArguments` for arguments the function cannot take; the runner turns it into InputError. */
export class ArgumentError extends Error {
  override name = 'ArgumentError';
}

/** The arguments of a call given none (shared: a function never sees the array itself). */
export const NO_ARGUMENTS: readonly unknown[] = Object.freeze([]);

/**
 * The same text as the string V8 keeps for property names and literals (a property name's string is interned): the
 * registry's `Map.get` by a literal name such as `'Module.function'` then finds its key by identity instead of comparing
 * the characters (about 50 instructions a call under callgrind, docs/app-core.md). Any other equal string still finds it.
 */
function interned(text: string): string {
  return Object.keys({ [text]: 0 })[0]!;
}

export function createFunctionEntry(
  instance: object,
  methodName: string,
  options: ResolvedExportOptions,
  moduleName: string,
): FunctionEntry {
  const method = (instance as Record<string, unknown>)[methodName] as (...args: any[]) => unknown;
  const signature = parseParameterSignature(method);
  const parameters = options.parameters ?? signature.names;
  const designTypes = Reflect.getMetadata?.('design:paramtypes', Object.getPrototypeOf(instance), methodName) as
    unknown[] | undefined;
  if (options.ignoreCredentials && options.level !== 0)
    throw new Error(`${moduleName}.${options.name}: ignoreCredentials needs level 0 (it runs as an anonymous caller)`);
  const resolved: ResolvedExportOptions = { ...options, modName: moduleName };
  return {
    key: interned(`${moduleName}.${options.name}`),
    module: moduleName,
    functionName: options.name,
    source: `${instance.constructor?.name ?? 'Object'}.${methodName}`,
    instance,
    methodName,
    method,
    options: resolved,
    parameters,
    parameterStyle: signature.style,
    acceptsAnyKeyword: signature.acceptsAny,
    parameterTypes: Array.isArray(designTypes)
      ? designTypes.map((type) => (typeof type === 'function' ? type.name : 'Object'))
      : null,
    schema: options.schema,
    guarded: options.level !== 0 || options.restrictInVirtualMode || options.state !== null,
    cache: options.memoryCache ? 'memory' : options.fileCache ? 'file' : null,
    direct:
      signature.style === 'positional' &&
      options.preCompute === null &&
      !options.memoryCache &&
      !options.fileCache &&
      !options.requestAsKwarg,
  };
}

/**
 * Maps a call's positional `args` and keyword `kwargs` onto the function's parameters: kwargs land at
 * their parameter's position (or in the destructured object); an unknown keyword, or a keyword given
 * positionally as well, raises `ArgumentError`. `request` is added as the `request` keyword when the
 * function asked for it (`requestAsKwarg`).
 */
export function bindArguments(
  entry: FunctionEntry,
  args: readonly unknown[] | undefined,
  kwargs: Record<string, unknown> | undefined,
  request?: unknown,
): unknown[] {
  const passRequest = request !== undefined && entry.options.requestAsKwarg;
  if (entry.parameterStyle === 'object') return [bindObject(entry, args, kwargs, passRequest ? request : undefined)];
  if (kwargs === undefined && !passRequest) return (args ?? NO_ARGUMENTS) as unknown[];
  const positional = args ? args.slice() : [];
  if (kwargs !== undefined) {
    for (const name in kwargs) {
      const index = parameterIndex(entry.parameters, name);
      if (index === -1) throw new ArgumentError(`${entry.key} got an unexpected keyword argument '${name}'`);
      if (index < (args?.length ?? 0))
        throw new ArgumentError(`${entry.key} got multiple values for argument '${name}'`);
      positional[index] = kwargs[name];
    }
  }
  if (passRequest) {
    const index = entry.parameters.indexOf('request');
    positional[index === -1 ? Math.max(entry.parameters.length, positional.length) : index] = request;
  }
  return positional;
}

/**
 * `parameters.indexOf(name)` as a loop: a function has a few parameters, and the builtin's call cost more than the
 * comparisons (about 80 instructions a keyword under callgrind, docs/app-core.md).
 */
function parameterIndex(parameters: readonly string[], name: string): number {
  for (let index = 0; index < parameters.length; index++) if (parameters[index] === name) return index;
  return -1;
}

function bindObject(
  entry: FunctionEntry,
  args: readonly unknown[] | undefined,
  kwargs: Record<string, unknown> | undefined,
  request: unknown,
): Record<string, unknown> {
  const bound: Record<string, unknown> = {};
  if (args && args.length > 0) {
    if (args.length !== 1 || args[0] === null || typeof args[0] !== 'object' || Array.isArray(args[0])) {
      throw new ArgumentError(`${entry.key} takes keyword arguments only`);
    }
    Object.assign(bound, args[0]);
  }
  if (kwargs !== undefined) {
    for (const name in kwargs) {
      if (!entry.acceptsAnyKeyword && !entry.parameters.includes(name)) {
        throw new ArgumentError(`${entry.key} got an unexpected keyword argument '${name}'`);
      }
      bound[name] = kwargs[name];
    }
  }
  if (request !== undefined) bound.request = request;
  return bound;
}

/**
 * HTTP methods a function answers: `AUTO` means GET and POST without parameters, POST with parameters. A
 * parameterless function takes POST too because the original web client posts every call by default (an
 * empty or `{}` body), and the original worker accepted any method.
 */
export function httpMethodsFor(entry: Pick<FunctionEntry, 'parameters' | 'options'>): Exclude<HttpMethod, 'AUTO'>[] {
  const methods = new Set<Exclude<HttpMethod, 'AUTO'>>();
  const visibleParameters = entry.parameters.filter((name) => name !== 'request');
  for (const method of entry.options.apiMethods) {
    if (method === 'AUTO') {
      if (visibleParameters.length === 0) methods.add('GET');
      methods.add('POST');
    } else methods.add(method);
  }
  return [...methods];
}

/** A function of the registry as plain data (wire names, snake_case like the original platform's record). */
export interface FunctionDescription {
  key: string;
  module: string;
  function: string;
  source: string;
  parameters: string[];
  parameter_style: 'positional' | 'object';
  parameter_types: string[] | null;
  schema: JsonSchema | null;
  http_methods: string[];
  options: Record<string, unknown>;
}

export function describeFunction(entry: FunctionEntry): FunctionDescription {
  const options = entry.options;
  return {
    key: entry.key,
    module: entry.module,
    function: entry.functionName,
    source: entry.source,
    parameters: [...entry.parameters],
    parameter_style: entry.parameterStyle,
    parameter_types: entry.parameterTypes ? [...entry.parameterTypes] : null,
    schema: entry.schema,
    http_methods: httpMethodsFor(entry),
    options: {
      name: options.name,
      mod_name: options.modName,
      helper: options.helper,
      version: options.version,
      test: options.test,
      restrict_in_virtual_mode: options.restrictInVirtualMode,
      api: options.api,
      initial: options.initial,
      exit_f: options.exitF,
      test_only: options.testOnly,
      memory_cache: options.memoryCache,
      file_cache: options.fileCache,
      row: options.row,
      request_as_kwarg: options.requestAsKwarg,
      state: options.state,
      level: options.level,
      ignore_credentials: options.ignoreCredentials,
      memory_cache_max_size: options.memoryCacheMaxSize,
      memory_cache_ttl: options.memoryCacheTtl,
      samples: options.samples,
      interface: options.interface,
      pre_compute: options.preCompute !== null,
      post_compute: options.postCompute !== null,
      api_methods: [...options.apiMethods],
      websocket_handler: options.websocketHandler,
      websocket_context: options.websocketContext,
    },
  };
}
