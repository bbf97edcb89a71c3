import { MiB, type EnvironmentReader, type ListenConfig } from './environment-reader.js';

/** The MCP transport: where it listens and the limits of its tools and sessions. */
export interface McpConfig extends ListenConfig {
  /** MCP_TOOL_TIMEOUT_SECONDS: a tool call's budget (30). */
  toolTimeoutSeconds: number;
  /** MCP_MAX_RESULT_BYTES: largest tool result (1 MiB). */
  maxResultBytes: number;
  /** MCP_PYTHON: what runs `python_execute` (`pyodide`: CPython in the WebAssembly sandbox; `off`: the tool is absent). */
  python: 'pyodide' | null;
  /** MCP_PYTHON_TIMEOUT_SECONDS (30) and MCP_PYTHON_MAX_OUTPUT_BYTES (64 KiB). */
  pythonTimeoutSeconds: number;
  pythonMaxOutputBytes: number;
  /** MCP_PYTHON_MEMORY_MB: memory one `python_execute` call may use (256). */
  pythonMemoryMb: number;
  /** MCP_PYTHON_CONCURRENCY: `python_execute` calls running at once; more wait (2). */
  pythonConcurrency: number;
  /** MCP_SESSION_IDLE_SECONDS (3600) and MCP_MAX_SESSIONS (10000). */
  sessionIdleSeconds: number;
  maxSessions: number;
  /** MCP_MODS_RESCAN_SECONDS: how often MODS_DIR is checked for newly installed mods (5; 0: never). */
  modsRescanSeconds: number;
  /**
   * MCP_CORS_ORIGINS: origins whose pages may call the transport besides loopback ones (none by default; `*` = every
   * origin, refused with `--no-auth`); `null` never passes. Keys travel in headers, never cookies.
   */
  corsOrigins: string[];
}

// The transport sits behind its operator's choice of proxy: loopback unless told otherwise.
export function readMcpSection(read: EnvironmentReader): McpConfig {
  return {
    host: read.string('MCP_HOST') ?? '127.0.0.1',
    port: read.port('MCP_PORT', 8765),
    toolTimeoutSeconds: read.number('MCP_TOOL_TIMEOUT_SECONDS', 30, { min: 0.001 }),
    maxResultBytes: read.integer('MCP_MAX_RESULT_BYTES', MiB, { min: 1024 }),
    // Only the sandbox runs caller code; a host interpreter (the old `python3`) is refused, not used.
    python: read.oneOf('MCP_PYTHON', ['pyodide', 'off'], 'pyodide') === 'off' ? null : 'pyodide',
    pythonTimeoutSeconds: read.number('MCP_PYTHON_TIMEOUT_SECONDS', 30, { min: 0.001 }),
    pythonMaxOutputBytes: read.integer('MCP_PYTHON_MAX_OUTPUT_BYTES', 64 * 1024, { min: 1 }),
    pythonMemoryMb: read.integer('MCP_PYTHON_MEMORY_MB', 256, { min: 128, max: 4096 }),
    pythonConcurrency: read.integer('MCP_PYTHON_CONCURRENCY', 2, { min: 1, max: 64 }),
    sessionIdleSeconds: read.number('MCP_SESSION_IDLE_SECONDS', 3600, { min: 0.001 }),
    maxSessions: read.integer('MCP_MAX_SESSIONS', 10_000, { min: 1 }),
    modsRescanSeconds: read.number('MCP_MODS_RESCAN_SECONDS', 5, { min: 0 }),
    corsOrigins: read.originList('MCP_CORS_ORIGINS'),
  };
}
