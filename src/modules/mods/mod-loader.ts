import { readFile, readdir, realpath } from 'node:fs/promises';
import { join, relative, sep, isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Export, Mod, readExportOptions, readModOptions, type ExportOptions } from '../app-core/export.decorator.js';
import type { FunctionRegistry } from '../app-core/function-registry.js';
import type { FunctionRunner } from '../app-core/function-runner.js';
import { MOD_MANIFEST_FILE, parseModManifest, supportsHostVersion, type ModManifest } from './mod-manifest.js';
import { ModsLockFile, type LockedMod } from './mods-lock-file.js';

/** What a mod class receives as its constructor's one argument. */
export interface ModContext {
  /** The application core: `runFunction`, `aRunFunction`, `runAny` on every registered function. */
  app: FunctionRunner | undefined;
  manifest: ModManifest;
  /** Absolute path of the mod's installed directory. */
  directory: string;
  logger: ModLoaderLogger;
}

export interface ModLoaderLogger {
  log(message: string): void;
  warn(message: string): void;
}

export interface LoadedMod {
  name: string;
  version: string;
  directory: string;
  /** Registered function keys (`hello.greet`). */
  functions: string[];
}

export interface FailedMod {
  /** The manifest's name, or the directory name when the manifest is unreadable. */
  name: string;
  directory: string;
  error: string;
}

export interface ModLoadReport {
  loaded: LoadedMod[];
  failed: FailedMod[];
}

export interface LoadModsOptions {
  modsDir: string;
  registry: FunctionRegistry;
  /** Handed to mods as `context.app`. */
  runner?: FunctionRunner;
  /** The host platform version checked against each manifest's `toolbox_version`. */
  hostVersion?: string;
  /** Run the mods' `initial` functions after registering them (default false: a booting Nest app runs them all). */
  runInitial?: boolean;
  /** Mod directories (real paths) already loaded, skipped: a running server loading what was installed since. */
  skipDirectories?: ReadonlySet<string>;
  logger?: ModLoaderLogger;
}

/**
 * The decorator-free registration form for mods written in plain JavaScript (which has no
 * decorators): a static `exports` on the class, either an object of method name to `@Export`
 * options or an array of options each naming its `method`; `static modName` names the module.
 *
 * ```js
 * export class HelloMod {
 *   static modName = 'hello';
 *   static exports = { greet: { api: true, helper: 'says hello' } };
 *   greet(name = 'World') { return `Hello, ${name}!`; }
 * }
 * ```
 */
export interface StaticModDescriptor {
  modName?: string;
  exports?: Record<string, ExportOptions> | Array<ExportOptions & { method: string }>;
}

const silentLogger: ModLoaderLogger = { log: () => undefined, warn: () => undefined };

/**
 * Loads every installed mod (each directory of `modsDir` holding a `tb-mod.json`, in name order,
 * skipping versions the lock file no longer names):
 * imports its ES module entry, instantiates its mod classes with a `ModContext` and registers them.
 * A mod that fails (bad manifest, unsupported platform version, import error, constructor error,
 * a function key taken already) is reported in `failed` and skipped; it never stops the others.
 */
export async function loadInstalledMods(options: LoadModsOptions): Promise<ModLoadReport> {
  const logger = options.logger ?? silentLogger;
  const report: ModLoadReport = { loaded: [], failed: [] };
  let names: string[];
  try {
    names = (await readdir(options.modsDir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  // The lock says which version of an installed mod is current; another version's directory is a
  // leftover of an interrupted update. Directories the lock does not name are mods placed by hand.
  let locked = new Map<string, LockedMod>();
  try {
    locked = new Map((await new ModsLockFile(options.modsDir).list()).map((mod) => [mod.name, mod]));
  } catch (error) {
    logger.warn(`${(error as Error).message}; loading every mod directory`);
  }
  for (const directoryName of names) {
    const directory = join(options.modsDir, directoryName);
    if (options.skipDirectories?.has(await realpath(directory).catch(() => directory))) continue;
    let manifestText: string;
    try {
      manifestText = await readFile(join(directory, MOD_MANIFEST_FILE), 'utf8');
    } catch {
      continue; // not a mod: staging leftovers, or a directory someone else keeps here
    }
    let name = directoryName;
    try {
      const manifest = parseModManifest(manifestText);
      name = manifest.name;
      const current = locked.get(manifest.name);
      if (current && current.version !== manifest.version) continue;
      const loaded = await loadMod(directory, manifest, options, logger);
      report.loaded.push(loaded);
      logger.log(`mod ${manifest.name}@${manifest.version} loaded: ${loaded.functions.join(', ') || 'no functions'}`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report.failed.push({ name, directory, error: message });
      logger.warn(`mod ${name} (${directory}) skipped: ${message}`);
    }
  }
  return report;
}

async function loadMod(
  directory: string,
  manifest: ModManifest,
  options: LoadModsOptions,
  logger: ModLoaderLogger,
): Promise<LoadedMod> {
  if (options.hostVersion && !supportsHostVersion(manifest, options.hostVersion)) {
    throw new Error(`needs platform version ${manifest.toolboxVersion}, this is ${options.hostVersion}`);
  }
  const root = await realpath(directory);
  const entryPath = await realpath(join(root, ...manifest.entry.split('/')));
  const inside = relative(root, entryPath);
  if (inside.startsWith(`..${sep}`) || isAbsolute(inside))
    throw new Error(`entry ${manifest.entry} resolves outside the mod directory`);

  const namespace = (await import(pathToFileURL(entryPath).href)) as Record<string, unknown>;
  const classes = modClassesOf(namespace);
  if (classes.length === 0)
    throw new Error(`${manifest.entry} exports no mod class (a class with @Export methods or a static "exports")`);
  const context: ModContext = { app: options.runner, manifest, directory: root, logger };
  const instances = classes.map((ModClass) => new ModClass(context) as object);
  const functions = options.registry.registerInstances(instances);
  if (options.runInitial) await options.registry.runInitialFunctions(functions);
  return { name: manifest.name, version: manifest.version, directory: root, functions };
}

type ModClass = new (context: ModContext) => unknown;

/**
 * The mod classes a module exports (named or default, each once): classes carrying `@Mod`, an
 * `@Export` method, or the static descriptor, which is turned into the same metadata here.
 */
export function modClassesOf(namespace: Record<string, unknown>): ModClass[] {
  const classes = new Set<ModClass>();
  for (const value of Object.values(namespace)) {
    if (typeof value !== 'function' || typeof value.prototype !== 'object' || value.prototype === null) continue;
    const candidate = value as ModClass & StaticModDescriptor;
    applyStaticDescriptor(candidate);
    if (readModOptions(candidate) || hasExportedMethod(candidate.prototype as object)) classes.add(candidate);
  }
  return [...classes];
}

/** Applies `static modName` / `static exports` as `@Mod` / `@Export` would. Throws on a descriptor naming no method. */
export function applyStaticDescriptor(
  target: (abstract new (...args: never[]) => unknown) & StaticModDescriptor,
): void {
  const prototype = target.prototype as Record<string, unknown>;
  if (typeof target.modName === 'string' && target.modName !== '' && !readModOptions(target))
    Mod(target.modName)(target);
  const descriptor = target.exports;
  if (descriptor === undefined || descriptor === null) return;
  const entries: Array<[string, ExportOptions]> = Array.isArray(descriptor)
    ? descriptor.map((item) => {
        const { method, ...exportOptions } = item ?? ({} as ExportOptions & { method: string });
        return [method, exportOptions];
      })
    : Object.entries(descriptor);
  for (const [methodName, exportOptions] of entries) {
    const method = typeof methodName === 'string' ? prototype[methodName] : undefined;
    if (typeof method !== 'function')
      throw new Error(`${target.name}.exports names "${String(methodName)}", which is not a method of the class`);
    if (readExportOptions(method)) continue;
    Export(exportOptions ?? {})(prototype, methodName, {
      value: method,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
}

function hasExportedMethod(prototype: object): boolean {
  for (
    let current: object | null = prototype;
    current && current !== Object.prototype;
    current = Object.getPrototypeOf(current)
  ) {
    for (const name of Object.getOwnPropertyNames(current)) {
      if (name === 'constructor') continue;
      const property = Object.getOwnPropertyDescriptor(current, name);
      if (property && typeof property.value === 'function' && readExportOptions(property.value)) return true;
    }
  }
  return false;
}
