import { join, resolve } from 'node:path';
import type { EnvironmentReader } from './environment-reader.js';

/** The application core: app id, installed mods, network probe and `runHttp`. */
export interface AppCoreConfig {
  /** APP_ID; `testOnly` functions register only when it contains `test`. */
  appId: string;
  /** MODS_DIR, default `<DATA_DIR>/mods`: installed mods and `tb-mods.lock.json`. */
  modsDir: string;
  platformBase: string | null;
  platformBasePort: number | null;
  platformRemoteBase: string | null;
  /** PLATFORM_HTTP_URL: the platform HTTP worker `runHttp` calls. */
  httpUrl: string | null;
  /** FUNCTION_TEST_TIMEOUT_SECONDS: budget of one call in `tb functions test` (default 15). */
  testTimeoutSeconds: number;
  /** DOCS_ROOT: Markdown root of the docs system (default `<cwd>/docs`). */
  docsRoot: string | null;
  /** DOCS_SOURCE_ROOTS (comma-separated): code indexed by the docs system (default `<cwd>/src`). */
  docsSourceRoots: string[];
}

/** The registry `tb mods` installs from and publishes to (TB_REGISTRY_URL, TB_TOKEN). */
export interface ModsRegistryConfig {
  url: string;
  token: string | null;
}

export function readAppCoreSection(read: EnvironmentReader, dataDir: string): AppCoreConfig {
  return {
    appId: read.string('APP_ID') ?? 'toolbox',
    modsDir: resolve(read.string('MODS_DIR') ?? join(dataDir, 'mods')),
    platformBase: read.string('PLATFORM_BASE'),
    platformBasePort:
      read.string('PLATFORM_BASE_PORT') === null ? null : read.integer('PLATFORM_BASE_PORT', 0, { min: 1, max: 65535 }),
    platformRemoteBase: read.baseUrl('PLATFORM_REMOTE_BASE'),
    httpUrl: read.baseUrl('PLATFORM_HTTP_URL'),
    testTimeoutSeconds: read.number('FUNCTION_TEST_TIMEOUT_SECONDS', 15, { min: 0.001 }),
    docsRoot: read.string('DOCS_ROOT') === null ? null : resolve(read.string('DOCS_ROOT')!),
    docsSourceRoots: read.list('DOCS_SOURCE_ROOTS').map((root) => resolve(root)),
  };
}

export function readModsRegistrySection(read: EnvironmentReader): ModsRegistryConfig {
  return {
    url: (read.string('TB_REGISTRY_URL') ?? 'http://127.0.0.1:4025').replace(/\/+$/, ''),
    token: read.string('TB_TOKEN'),
  };
}
