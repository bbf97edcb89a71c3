import { PlatformError } from '../../common/errors.js';
import { readExportOptions, readModOptions } from './export.decorator.js';
import {
  createFunctionEntry,
  describeFunction,
  type FunctionDescription,
  type FunctionEntry,
} from './function-entry.js';

/** Websocket handlers a `websocketHandler` function returns (camelCase names are accepted too). */
export interface WebsocketHandlers {
  on_connect?: (...args: any[]) => unknown;
  on_message?: (...args: any[]) => unknown;
  on_disconnect?: (...args: any[]) => unknown;
}

export interface RegistryLogger {
  log(message: string): void;
  error(message: string, trace?: string): void;
}

export interface FunctionRegistryOptions {
  /** The app id; `testOnly` functions register only when it contains `test`. */
  appId: string;
  logger?: RegistryLogger;
}

const consoleLogger: RegistryLogger = {
  log: (message) => console.log(message),
  error: (message, trace) => console.error(message, trace ?? ''),
};

/**
 * The registry of exported functions, keyed `Module.function`. Pure: Nest discovery lives in
 * `FunctionRegistryService`, which feeds instances to `registerInstances`.
 */
export class FunctionRegistry {
  private readonly entriesByKey = new Map<string, FunctionEntry>();
  private readonly websocketHandlerMap = new Map<string, WebsocketHandlers>();
  protected readonly logger: RegistryLogger;

  constructor(protected readonly registryOptions: FunctionRegistryOptions) {
    this.logger = registryOptions.logger ?? consoleLogger;
  }

  /**
   * Registers every `@Export` method of `instance` (a mod object created outside Nest, for example
   * loaded from a mod ZIP). All or nothing: a duplicate key or an invalid option registers none of them.
   * Returns the registered keys. Initial functions are not run; call `runInitialFunctions(keys)`.
   */
  registerInstance(instance: object): string[] {
    return this.registerInstances([instance]);
  }

  /** Registers several instances at once, reporting duplicates between them as well as with the registry. */
  registerInstances(instances: readonly object[]): string[] {
    const pending = new Map<string, FunctionEntry>();
    for (const instance of instances) {
      for (const entry of this.collectEntries(instance)) {
        const existing = this.entriesByKey.get(entry.key) ?? pending.get(entry.key);
        if (existing) {
          throw new PlatformError(
            'CONFLICT',
            `Function ${entry.key} is registered twice: by ${existing.source} and by ${entry.source}`,
          );
        }
        pending.set(entry.key, entry);
      }
    }
    for (const entry of pending.values()) {
      this.entriesByKey.set(entry.key, entry);
      if (entry.options.websocketHandler) this.registerWebsocketHandler(entry);
    }
    return [...pending.keys()];
  }

  /** Removes functions by key, or every function of a module when given `Module` (no dot). */
  unregister(keyOrModule: string): string[] {
    const removed: string[] = [];
    for (const entry of [...this.entriesByKey.values()]) {
      if (entry.key === keyOrModule || entry.module === keyOrModule) {
        this.entriesByKey.delete(entry.key);
        if (entry.options.websocketHandler)
          this.websocketHandlerMap.delete(`${entry.module}/${entry.options.websocketHandler}`);
        removed.push(entry.key);
      }
    }
    return removed;
  }

  /** The entry registered under `Module.function`, if any. */
  get(key: string): FunctionEntry | undefined {
    return this.entriesByKey.get(key);
  }

  has(key: string): boolean {
    return this.entriesByKey.has(key);
  }

  /** Every entry, in registration order. */
  entries(): FunctionEntry[] {
    return [...this.entriesByKey.values()];
  }

  /** The registry as plain data: key, module, function, options, parameter names, schema, HTTP methods. */
  list(filter?: { module?: string }): FunctionDescription[] {
    const result: FunctionDescription[] = [];
    for (const entry of this.entriesByKey.values()) {
      if (filter?.module && entry.module !== filter.module) continue;
      result.push(describeFunction(entry));
    }
    return result;
  }

  /** Websocket handlers by `module/handler`. */
  websocketHandlers(): ReadonlyMap<string, WebsocketHandlers> {
    return this.websocketHandlerMap;
  }

  /** Runs `initial` functions (all, or those among `keys`); a failure is logged and does not stop the others. */
  async runInitialFunctions(keys?: readonly string[]): Promise<void> {
    await this.runLifecycle('initial', keys);
  }

  /** Runs `exitF` functions (all, or those among `keys`); errors are logged, never raised. */
  async runExitFunctions(keys?: readonly string[]): Promise<void> {
    await this.runLifecycle('exitF', keys);
  }

  private async runLifecycle(kind: 'initial' | 'exitF', keys?: readonly string[]): Promise<void> {
    const wanted = keys ? new Set(keys) : undefined;
    for (const entry of this.entriesByKey.values()) {
      if (!entry.options[kind] || (wanted && !wanted.has(entry.key))) continue;
      try {
        await entry.method.call(entry.instance);
      } catch (error) {
        const label = kind === 'initial' ? 'initial' : 'exit';
        this.logger.error(
          `${label} function ${entry.key} (${entry.source}) failed: ${(error as Error)?.message ?? error}`,
          (error as Error)?.stack,
        );
      }
    }
  }

  private collectEntries(instance: object): FunctionEntry[] {
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) return [];
    const classConstructor = (instance as { constructor?: unknown }).constructor;
    const modName = readModOptions(classConstructor)?.name;
    const entries: FunctionEntry[] = [];
    for (const methodName of methodNamesOf(prototype)) {
      const options = readExportOptions((instance as Record<string, unknown>)[methodName]);
      if (!options) continue;
      if (options.testOnly && !this.registryOptions.appId.includes('test')) continue;
      const moduleName =
        options.modName || modName || (typeof classConstructor === 'function' ? classConstructor.name : 'Object');
      const entry = createFunctionEntry(instance, methodName, options, moduleName);
      if (options.memoryCache && options.fileCache) {
        throw new PlatformError(
          'BAD_REQUEST',
          `Function ${entry.key} (${entry.source}): memoryCache and fileCache cannot both be set`,
        );
      }
      entries.push(entry);
    }
    return entries;
  }

  private registerWebsocketHandler(entry: FunctionEntry): void {
    const key = `${entry.module}/${entry.options.websocketHandler}`;
    const store = (handlers: unknown) => this.websocketHandlerMap.set(key, normaliseHandlers(handlers));
    try {
      const produced = entry.method.call(entry.instance);
      if (produced && typeof (produced as Promise<unknown>).then === 'function') {
        (produced as Promise<unknown>).then(store, (error: Error) =>
          this.logger.error(`websocket handler ${key} (${entry.source}) failed: ${error?.message}`, error?.stack),
        );
      } else {
        store(produced);
      }
    } catch (error) {
      this.logger.error(
        `websocket handler ${key} (${entry.source}) failed: ${(error as Error)?.message}`,
        (error as Error)?.stack,
      );
    }
  }
}

function normaliseHandlers(value: unknown): WebsocketHandlers {
  const source = (value ?? {}) as Record<string, unknown>;
  const pick = (snake: string, camel: string) => {
    const handler = source[snake] ?? source[camel];
    return typeof handler === 'function' ? (handler as (...args: any[]) => unknown) : undefined;
  };
  return {
    on_connect: pick('on_connect', 'onConnect'),
    on_message: pick('on_message', 'onMessage'),
    on_disconnect: pick('on_disconnect', 'onDisconnect'),
  };
}

/** Method names along the prototype chain (closest first), excluding Object's own and accessors. */
function methodNamesOf(prototype: object): string[] {
  const names = new Set<string>();
  for (
    let current: object | null = prototype;
    current && current !== Object.prototype;
    current = Object.getPrototypeOf(current)
  ) {
    for (const name of Object.getOwnPropertyNames(current)) {
      if (name === 'constructor' || names.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(current, name);
      if (descriptor && typeof descriptor.value === 'function') names.add(name);
    }
  }
  return [...names];
}
