export const MCP_OPTIONS = Symbol('MCP_OPTIONS');

export interface McpOptions {
  /** The platform version, in `server_info` and `/health`. */
  version: string;
  /** `--stdio`, or `http`: reported by `/health` as `mode`. */
  mode: 'http' | 'stdio';
  /** `--no-auth`: every caller is an admin (only for a server bound to localhost). */
  noAuth: boolean;
  /** A tool call's budget (MCP_TOOL_TIMEOUT_SECONDS, 30 s). */
  toolTimeoutMs: number;
  /** Largest tool result text (MCP_MAX_RESULT_BYTES, 1 MiB); a longer one is cut with a clear message. */
  maxResultBytes: number;
  /** `python_execute`'s sandbox (null: the tool is absent), then the timeout and output cap of a call. */
  python: McpPythonOptions | null;
  pythonTimeoutMs: number;
  pythonMaxOutputBytes: number;
  /** Session idle expiry and cap (MCP_SESSION_IDLE_SECONDS 3600, MCP_MAX_SESSIONS 10000). */
  sessionIdleMs: number;
  maxSessions: number;
  /** How often MODS_DIR is checked for newly installed mods (ms; 0: never). */
  modsRescanMs: number;
}

/** The WebAssembly sandbox of `python_execute` (see python-runner.ts). */
export interface McpPythonOptions {
  /** The pyodide package's directory. */
  pyodideDirectory: string;
  /** Memory one call may use (MCP_PYTHON_MEMORY_MB, 256). */
  memoryMb: number;
  /** Calls running at once (MCP_PYTHON_CONCURRENCY, 2). */
  concurrency: number;
}
