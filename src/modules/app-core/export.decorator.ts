import 'reflect-metadata';

/** Metadata key of `@Export` options, stored on the method function itself. */
export const EXPORT_METADATA = 'app-core:export';
/** Metadata key of `@Mod` options, stored on the class. */
export const MOD_METADATA = 'app-core:mod';

export type HttpMethod = 'AUTO' | 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One test call: positional `args` and/or keyword `kwargs`. */
export interface SampleCall {
  args?: unknown[];
  kwargs?: Record<string, unknown>;
}

/**
 * Test samples: a list of calls (each a `SampleCall`, or a plain object taken as its kwargs),
 * or one plain object taken as the kwargs of a single call.
 */
export type Samples = Array<SampleCall | Record<string, unknown>> | Record<string, unknown>;

/** A JSON schema (draft 2020-12 subset) describing the parameters as one object. */
export type JsonSchema = Record<string, unknown>;

/** `preCompute` may return new arguments (`{args, kwargs}` or `[args, kwargs]`) or nothing to keep them. */
export type PreCompute = (
  args: unknown[],
  kwargs: Record<string, unknown>,
) => { args?: unknown[]; kwargs?: Record<string, unknown> } | [unknown[], Record<string, unknown>] | void;

/** `postCompute` receives the outcome (a Result, or the raw value of a `row` function) and returns its replacement. */
export type PostCompute = (result: any) => unknown;

/**
 * Options of `@Export`: the original platform's registration record in camelCase, with its defaults.
 * `parameters` and `schema` are additions: TypeScript keeps no parameter names at run time.
 */
export interface ExportOptions {
  /** Registry name of the function; the method's own name by default. */
  name?: string;
  /** Module name; overrides the class's `@Mod` name. */
  modName?: string;
  /** One-line help shown in listings. */
  helper?: string;
  version?: string | null;
  /** Included in the test run (default true). */
  test?: boolean;
  /** Refused while the app runs in virtual mode (default false). */
  restrictInVirtualMode?: boolean;
  /** Exposed over HTTP at `/api/{module}/{function}` (default false). */
  api?: boolean;
  /** Run once when the application starts (default false). */
  initial?: boolean;
  /** Run once when the application shuts down (default false). */
  exitF?: boolean;
  /** Registered only when the app id contains `test` (default false). */
  testOnly?: boolean;
  /** Cache results in memory (LRU, default false); exclusive with `fileCache`. */
  memoryCache?: boolean;
  /** Cache results under `<dataDir>/cache/functions` (default false); exclusive with `memoryCache`. */
  fileCache?: boolean;
  /** Return the raw value instead of wrapping it in a Result (default false). */
  row?: boolean;
  /** Pass the HTTP request as the `request` keyword argument (default false). */
  requestAsKwarg?: boolean;
  /** true: always call on the mod instance; false: never; null/undefined: follow the caller's `withState`. */
  state?: boolean | null;
  /** Access level the caller needs (default 0, see `hasAccessLevel`). */
  level?: number;
  /**
   * The HTTP worker does not read the caller's credentials (cookie, Bearer) for this function, and anyone may
   * call it (default false). For login, refresh and logout functions: a stale cookie or an expired token the
   * client still sends must not turn them into a 401. Needs `level` 0; the function runs as an anonymous caller.
   */
  ignoreCredentials?: boolean;
  /** Entries kept by the memory cache (default 100). */
  memoryCacheMaxSize?: number;
  /** Seconds an entry lives in the memory cache (default 300). */
  memoryCacheTtl?: number;
  /** Calls used by the test run. */
  samples?: Samples | null;
  /** The interface the function belongs to; `tb` when none. */
  interface?: string | null;
  preCompute?: PreCompute | null;
  postCompute?: PostCompute | null;
  /** HTTP methods; `AUTO` means GET without parameters and POST with parameters (default `['AUTO']`). */
  apiMethods?: HttpMethod[];
  /** The method returns `{on_connect, on_message, on_disconnect}` handlers registered as `module/handler`. */
  websocketHandler?: string | null;
  /** The websocket handlers receive the connection context (default false). */
  websocketContext?: boolean;
  /** Parameter names, when the source text cannot tell (minified or wrapped functions). */
  parameters?: string[];
  /** JSON schema of the parameters (reused as MCP tool input schemas). */
  schema?: JsonSchema | null;
}

/** Export options with every default applied (`modName` still empty until the class is known). */
export interface ResolvedExportOptions {
  name: string;
  modName: string;
  helper: string;
  version: string | null;
  test: boolean;
  restrictInVirtualMode: boolean;
  api: boolean;
  initial: boolean;
  exitF: boolean;
  testOnly: boolean;
  memoryCache: boolean;
  fileCache: boolean;
  row: boolean;
  requestAsKwarg: boolean;
  state: boolean | null;
  level: number;
  ignoreCredentials: boolean;
  memoryCacheMaxSize: number;
  memoryCacheTtl: number;
  samples: Samples | null;
  interface: string;
  preCompute: PreCompute | null;
  postCompute: PostCompute | null;
  apiMethods: HttpMethod[];
  websocketHandler: string | null;
  websocketContext: boolean;
  parameters: string[] | null;
  schema: JsonSchema | null;
}

/** Applies the registration defaults; `methodName` names the function when `name` is absent. */
export function resolveExportOptions(options: ExportOptions, methodName: string): ResolvedExportOptions {
  return {
    name: options.name ?? methodName,
    modName: options.modName ?? '',
    helper: options.helper ?? '',
    version: options.version ?? null,
    test: options.test ?? true,
    restrictInVirtualMode: options.restrictInVirtualMode ?? false,
    api: options.api ?? false,
    initial: options.initial ?? false,
    exitF: options.exitF ?? false,
    testOnly: options.testOnly ?? false,
    memoryCache: options.memoryCache ?? false,
    fileCache: options.fileCache ?? false,
    row: options.row ?? false,
    requestAsKwarg: options.requestAsKwarg ?? false,
    state: options.state ?? null,
    level: options.level ?? 0,
    ignoreCredentials: options.ignoreCredentials ?? false,
    memoryCacheMaxSize: options.memoryCacheMaxSize ?? 100,
    memoryCacheTtl: options.memoryCacheTtl ?? 300,
    samples: options.samples ?? null,
    interface: options.interface ?? 'tb',
    preCompute: options.preCompute ?? null,
    postCompute: options.postCompute ?? null,
    apiMethods: options.apiMethods && options.apiMethods.length > 0 ? [...options.apiMethods] : ['AUTO'],
    websocketHandler: options.websocketHandler ?? null,
    websocketContext: options.websocketContext ?? false,
    parameters: options.parameters ? [...options.parameters] : null,
    schema: options.schema ?? null,
  };
}

/**
 * Marks a method of a mod class as a registered function. It only records metadata on the method;
 * the function registry finds it when the application boots (or when `registerInstance` is called).
 *
 * ```ts
 * @Mod('CloudM') @Injectable()
 * class CloudMod {
 *   @Export({ api: true, level: 1 }) getUser(name: string) { … }   // registered as CloudM.getUser
 * }
 * ```
 */
export function Export(options: ExportOptions = {}): MethodDecorator {
  return (_target, propertyKey, descriptor) => {
    if (typeof descriptor.value !== 'function') {
      throw new TypeError(`@Export() applies to methods, not to ${String(propertyKey)}`);
    }
    Reflect.defineMetadata(
      EXPORT_METADATA,
      resolveExportOptions(options, String(propertyKey)),
      descriptor.value as object,
    );
    return descriptor;
  };
}

export interface ModOptions {
  /** Module name used in registry keys (`CloudM.get_user`). */
  name: string;
  version?: string;
}

/** Names the module of a mod class; `@Export({ modName })` on a method overrides it. */
export function Mod(nameOrOptions: string | ModOptions): ClassDecorator {
  const options = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
  return (target) => {
    Reflect.defineMetadata(MOD_METADATA, { ...options }, target);
  };
}

/** The `@Export` options of a method, or undefined when it is not exported. */
export function readExportOptions(method: unknown): ResolvedExportOptions | undefined {
  if (typeof method !== 'function') return undefined;
  return Reflect.getMetadata(EXPORT_METADATA, method) as ResolvedExportOptions | undefined;
}

/** The `@Mod` options of a class, or undefined. */
export function readModOptions(classConstructor: unknown): ModOptions | undefined {
  if (typeof classConstructor !== 'function') return undefined;
  return Reflect.getMetadata(MOD_METADATA, classConstructor) as ModOptions | undefined;
}
