/** Configuration of the application core; the lead maps the platform's configuration onto it. */
export interface AppCoreOptions {
  /** The app id; `testOnly` functions register only when it contains `test`. */
  appId: string;
  /** Root of persisted state: `cache/functions/…` (file cache) and `docs-index.json`. */
  dataDir: string;
  /** Base URL of a platform HTTP worker for `runHttp` (for example `http://127.0.0.1:8000`). */
  httpBaseUrl?: string;
  /** Root of the Markdown docs the docs system reads and writes (default `<cwd>/docs`). */
  docsRoot?: string;
  /** Source roots indexed for code elements (default `[<cwd>/src]`). */
  sourceRoots?: string[];
  /** Virtual mode refuses functions marked `restrictInVirtualMode`. */
  virtualMode?: boolean;
  /** Network probe settings (PLATFORM_BASE, PLATFORM_BASE_PORT, PLATFORM_REMOTE_BASE). */
  probe?: { platformBase?: string; platformBasePort?: number | string; platformRemoteBase?: string };
  /** Budget of one call in the function test run, in milliseconds (default 15 000). */
  testTimeoutMs?: number;
  /** Version reported by `core.version` (default: the nearest package.json). */
  appVersion?: string;
}

/** Injection token of the `AppCoreOptions`. */
export const APP_CORE_OPTIONS = Symbol('APP_CORE_OPTIONS');
