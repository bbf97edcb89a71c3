import { EventEmitter } from 'node:events';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import {
  AppCoreService,
  FunctionRegistryService,
  Result,
  type FunctionDescription,
  type JsonSchema,
} from '../app-core/index.js';
import { ModsLoaderService } from '../mods/index.js';
import { callerFor, mayUseTool, toolNameFor, type McpPrincipal } from './mcp-permissions.js';
import { MCP_OPTIONS, type McpOptions } from './mcp.options.js';
import { PythonRunner } from './python-runner.js';
import { McpStats } from './mcp-stats.js';

/** A tool as `tools/list` shows it (MCP's Tool: name, description, inputSchema). */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** A tool call's answer (MCP's CallToolResult). */
export interface McpToolResult {
  content: Array<{ type: 'text'; text: string }>;
  isError: boolean;
  structuredContent?: Record<string, unknown>;
}

export interface McpResource {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
}

interface ToolDefinition extends McpTool {
  /** The app-core function's level, when the tool is one. */
  level?: number;
  run(principal: McpPrincipal, args: Record<string, unknown>): Promise<McpToolResult>;
}

/** Emitted when the set of tools changes (a mod was installed while the server runs). */
export const TOOLS_CHANGED = 'toolsChanged';

/**
 * The application core as MCP tools and resources, for both doors (REST and Streamable HTTP/stdio): one
 * catalogue, one permission filter (a tool a key may not use is absent from the list and refused on call),
 * one call path with a timeout and a result cap.
 */
@Injectable()
export class McpToolsService extends EventEmitter implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('McpTools');
  private catalogue: Map<string, ToolDefinition> | undefined;
  private fingerprint = '';
  private rescanTimer: NodeJS.Timeout | undefined;
  private rescanning = false;
  readonly stats = new McpStats();
  /** `python_execute`'s sandbox, when it is on. */
  private readonly python: PythonRunner | null;

  constructor(
    private readonly core: AppCoreService,
    private readonly functions: FunctionRegistryService,
    private readonly mods: ModsLoaderService,
    @Inject(MCP_OPTIONS) private readonly options: McpOptions,
  ) {
    super();
    this.python = options.python
      ? new PythonRunner({
          ...options.python,
          maxOutputBytes: options.pythonMaxOutputBytes,
          maxTimeoutMs: options.pythonTimeoutMs,
          onProblem: (message) => this.logger.warn(message),
        })
      : null;
  }

  onModuleInit(): void {
    this.fingerprint = this.registryFingerprint();
    if (this.options.modsRescanMs > 0) {
      this.rescanTimer = setInterval(() => void this.rescanMods(), this.options.modsRescanMs);
      this.rescanTimer.unref();
    }
    this.python?.warmUp();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.rescanTimer);
    await this.python?.close();
  }

  /** Loads mods installed since the last look and announces the new tools (also called by the interval). */
  async rescanMods(): Promise<void> {
    if (this.rescanning) return;
    this.rescanning = true;
    try {
      await this.mods.loadNewMods();
    } catch (error) {
      this.logger.warn(`could not load newly installed mods: ${(error as Error).message}`);
    } finally {
      this.rescanning = false;
    }
    this.checkForChanges();
  }

  /** Rebuilds the catalogue and emits TOOLS_CHANGED when the registry's functions changed. */
  checkForChanges(): boolean {
    const fingerprint = this.registryFingerprint();
    if (fingerprint === this.fingerprint) return false;
    this.fingerprint = fingerprint;
    this.catalogue = undefined;
    this.emit(TOOLS_CHANGED);
    return true;
  }

  /** The tools `principal` may use, built-in first, then the app core's `api: true` functions. */
  listTools(principal: McpPrincipal): McpTool[] {
    const tools: McpTool[] = [];
    for (const tool of this.tools().values())
      if (mayUseTool(principal, tool))
        tools.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
    return tools;
  }

  /** NOT_FOUND for an unknown tool, FORBIDDEN for one the key may not use; a failing tool is `isError: true`. */
  async callTool(principal: McpPrincipal, name: unknown, args: unknown): Promise<McpToolResult> {
    if (typeof name !== 'string' || name.length === 0)
      throw new PlatformError('BAD_REQUEST', 'name must be the tool name (a string)');
    if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args)))
      throw new PlatformError('BAD_REQUEST', 'arguments must be an object');
    const tool = this.tools().get(name);
    if (!tool) throw new PlatformError('NOT_FOUND', `Unknown tool: ${name}`);
    if (!mayUseTool(principal, tool))
      throw new PlatformError('FORBIDDEN', `The key "${principal.keyName}" may not use the tool ${name}`);
    const started = performance.now();
    let result: McpToolResult;
    try {
      const run = tool.run(principal, (args ?? {}) as Record<string, unknown>);
      // python_execute kills its process at its own timeout and reports it; the others get the tool budget.
      result = tool.name === 'python_execute' ? await run : await this.withTimeout(name, run);
    } catch (error) {
      result = errorResult(error instanceof Error ? error.message : String(error));
    }
    this.stats.recordCall(performance.now() - started, result.isError);
    return this.capped(result);
  }

  /** The resources; who may list them (the read permission) is declared at both doors (METHOD_PERMISSIONS). */
  listResources(): McpResource[] {
    return [
      {
        uri: 'toolbox://status',
        name: 'status',
        description: 'Server status: uptime, tools, sessions',
        mimeType: 'application/json',
      },
      {
        uri: 'toolbox://performance',
        name: 'performance',
        description: 'Request count, average latency, errors, cache hit rate',
        mimeType: 'application/json',
      },
      {
        uri: 'toolbox://docs/guides',
        name: 'docs guides',
        description: 'The documentation guides as one Markdown text',
        mimeType: 'text/markdown',
      },
    ];
  }

  async readResource(
    principal: McpPrincipal,
    uri: unknown,
    sessions: () => Promise<number>,
  ): Promise<{ contents: Array<{ uri: string; mimeType: string; text: string }> }> {
    if (typeof uri !== 'string' || uri.length === 0) throw new PlatformError('BAD_REQUEST', 'uri must be a string');
    const json = (value: unknown) => ({
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
    });
    if (uri === 'toolbox://status') return json(await this.status(sessions));
    if (uri === 'toolbox://performance') return json(this.stats.snapshot());
    if (uri === 'toolbox://docs/guides') {
      const outcome = await this.core.aRunFunction('docs.reader', {
        kwargs: { format_type: 'markdown', max_results: 100 },
        caller: callerFor(principal),
      });
      const result = outcome instanceof Result ? outcome : Result.ok(outcome);
      const data = result.get();
      const text = typeof data === 'string' ? data : JSON.stringify(data, null, 2);
      return { contents: [{ uri, mimeType: 'text/markdown', text }] };
    }
    throw new PlatformError('NOT_FOUND', `Unknown resource: ${uri}`);
  }

  async status(sessions: () => Promise<number>): Promise<Record<string, unknown>> {
    return {
      server: 'toolbox-mcp',
      version: this.options.version,
      mode: this.options.mode,
      uptime_seconds: this.stats.uptimeSeconds(),
      tools: this.tools().size,
      functions: this.functions.entries().length,
      sessions: await sessions(),
      python: this.python !== null,
      python_sandboxes: this.python?.sandboxes() ?? null,
      ...this.stats.snapshot(),
    };
  }

  private registryFingerprint(): string {
    return this.functions
      .entries()
      .map((entry) => entry.key)
      .join('\n');
  }

  private tools(): Map<string, ToolDefinition> {
    if (this.catalogue) {
      this.stats.cacheHits += 1;
      return this.catalogue;
    }
    this.stats.cacheMisses += 1;
    const catalogue = new Map<string, ToolDefinition>();
    for (const tool of this.builtinTools()) catalogue.set(tool.name, tool);
    for (const fn of this.exposedFunctions()) {
      const name = toolNameFor(fn.module, fn.function);
      if (catalogue.has(name)) continue; // a built-in tool of that name wins (docs_reader, docs_writer)
      catalogue.set(name, this.functionTool(name, fn));
    }
    this.catalogue = catalogue;
    return catalogue;
  }

  /**
   * The application core's functions an MCP key can reach, as tools and through `toolbox_execute` alike: those
   * registered with `api: true`. A function registered with `api: false` is internal to the core or to its
   * mod (a helper, a WebSocket handler, a test hook) and is not callable from outside, here as over HTTP.
   */
  private exposedFunctions(): FunctionDescription[] {
    return this.functions.list().filter((fn) => fn.options.api);
  }

  private functionTool(name: string, fn: FunctionDescription): ToolDefinition {
    const helper = typeof fn.options.helper === 'string' && fn.options.helper ? fn.options.helper : '';
    return {
      name,
      description: helper || `Runs ${fn.key} of the application core`,
      inputSchema: inputSchemaOf(fn),
      level: levelOf(fn),
      run: (principal, args) => this.runFunction(principal, fn.key, { kwargs: args }),
    };
  }

  private async runFunction(
    principal: McpPrincipal,
    key: string,
    call: { args?: unknown[]; kwargs?: Record<string, unknown> },
  ): Promise<McpToolResult> {
    const outcome = await this.core.aRunFunction(key, { ...call, caller: callerFor(principal) });
    const result = outcome instanceof Result ? outcome : Result.ok(outcome);
    const wire = result.toJSON();
    if (result.isError()) return errorResult(wire.info.help_text || `${key} failed`, wire);
    const data = wire.result.data;
    const text = typeof data === 'string' ? data : (JSON.stringify(data, null, 2) ?? 'null');
    return { content: [{ type: 'text', text }], isError: false, structuredContent: wire as never };
  }

  private builtinTools(): ToolDefinition[] {
    const docs = (key: string) => this.functions.list().find((fn) => fn.key === key);
    const tools: ToolDefinition[] = [
      {
        name: 'toolbox_execute',
        description:
          "Runs a function of the application core's API (the functions listed as tools): module, function, args (list), kwargs (object), timeout (seconds)",
        inputSchema: {
          type: 'object',
          required: ['module', 'function'],
          properties: {
            module: { type: 'string' },
            function: { type: 'string' },
            args: { type: 'array' },
            kwargs: { type: 'object' },
            timeout: { type: 'number', description: 'seconds, at most the server tool timeout' },
          },
        },
        run: async (principal, args) => {
          const { module, function: fn, args: positional, kwargs, timeout } = args;
          if (typeof module !== 'string' || typeof fn !== 'string')
            return errorResult('module and function must be strings');
          if (positional !== undefined && !Array.isArray(positional)) return errorResult('args must be a list');
          if (kwargs !== undefined && (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)))
            return errorResult('kwargs must be an object');
          // It reaches what tools/list could offer the key and nothing more: an exposed function, under its
          // tool's own rules (no way around docs_writer's write permission or a function's level).
          const target = this.exposedFunctions().find((entry) => entry.key === `${module}.${fn}`);
          if (!target)
            return errorResult(
              `${module}.${fn} is not a function of the application core's API: toolbox_execute runs only those (api: true)`,
            );
          const targetTool = { name: toolNameFor(module, fn), level: levelOf(target) };
          if (!mayUseTool(principal, targetTool))
            return errorResult(`The key "${principal.keyName}" may not run ${module}.${fn}`);
          const run = this.runFunction(principal, `${module}.${fn}`, {
            args: positional as unknown[] | undefined,
            kwargs: kwargs as Record<string, unknown> | undefined,
          });
          return typeof timeout === 'number' && timeout > 0
            ? this.withTimeout(`${module}.${fn}`, run, timeout * 1000)
            : run;
        },
      },
      {
        name: 'toolbox_status',
        description: 'Status of the MCP server and the application core: uptime, tools, functions, performance',
        inputSchema: { type: 'object', properties: {} },
        run: async () => jsonResult(await this.status(async () => -1)),
      },
      {
        name: 'toolbox_info',
        description: 'The modules of the application core and their functions (optionally one module)',
        inputSchema: { type: 'object', properties: { module: { type: 'string' } } },
        run: async (_principal, args) => {
          const module = typeof args.module === 'string' ? args.module : undefined;
          const byModule: Record<string, Array<{ function: string; parameters: string[]; helper: unknown }>> = {};
          for (const fn of this.functions.list(module ? { module } : undefined))
            (byModule[fn.module] ??= []).push({
              function: fn.function,
              parameters: fn.parameters,
              helper: fn.options.helper ?? '',
            });
          if (module && !byModule[module]) return errorResult(`Unknown module: ${module}`);
          return jsonResult({ modules: byModule });
        },
      },
      {
        name: 'toolbox_search',
        description: 'Finds functions of the application core whose name, module or help matches the query',
        inputSchema: {
          type: 'object',
          required: ['query'],
          properties: { query: { type: 'string' }, max_results: { type: 'integer', default: 25 } },
        },
        run: async (_principal, args) => {
          if (typeof args.query !== 'string') return errorResult('query must be a string');
          const words = args.query.toLowerCase().split(/\s+/).filter(Boolean);
          const max = typeof args.max_results === 'number' ? Math.max(1, Math.trunc(args.max_results)) : 25;
          const matches = this.functions
            .list()
            .map((fn) => {
              const haystack = `${fn.key} ${String(fn.options.helper ?? '')}`.toLowerCase();
              return { fn, score: words.filter((word) => haystack.includes(word)).length };
            })
            .filter((match) => match.score > 0)
            .sort((a, b) => b.score - a.score || a.fn.key.localeCompare(b.fn.key))
            .slice(0, max)
            .map(({ fn }) => ({ key: fn.key, parameters: fn.parameters, helper: fn.options.helper ?? '' }));
          return jsonResult({ query: args.query, results: matches });
        },
      },
    ];
    const aliases: Array<[string, string, string]> = [
      ['docs_reader', 'docs.reader', 'Searches the documentation (sections and code elements), best first'],
      ['docs_writer', 'docs.writer', 'Creates docs files and adds, updates or deletes sections'],
      ['source_code_lookup', 'docs.lookup', 'Finds code elements by name, type, file and language'],
    ];
    for (const [name, key, description] of aliases) {
      const fn = docs(key);
      if (!fn) continue;
      tools.push({
        name,
        description,
        inputSchema: inputSchemaOf(fn),
        level: levelOf(fn),
        run: (principal, args) => this.runFunction(principal, key, { kwargs: args }),
      });
    }
    const python = this.python;
    if (python) {
      tools.push({
        name: 'python_execute',
        description:
          'Runs Python 3 code (the standard library only) in a sandbox: CPython in WebAssembly with an in-memory file system, no network, no processes, a timeout, a memory cap and an output cap; returns stdout and stderr',
        inputSchema: {
          type: 'object',
          required: ['code'],
          properties: { code: { type: 'string' }, timeout: { type: 'number', description: 'seconds' } },
        },
        run: async (_principal, args) => {
          if (typeof args.code !== 'string') return errorResult('code must be a string');
          const timeoutMs =
            typeof args.timeout === 'number' && args.timeout > 0
              ? Math.min(args.timeout * 1000, this.options.pythonTimeoutMs)
              : this.options.pythonTimeoutMs;
          const run = await python.run(args.code, timeoutMs);
          const notes = [
            run.timedOut ? `[python_execute: stopped after the ${timeoutMs / 1000} s timeout]` : '',
            run.truncated ? `[python_execute: output cut at ${this.options.pythonMaxOutputBytes} bytes]` : '',
            run.memoryExceeded
              ? `[python_execute: stopped at the ${this.options.python?.memoryMb} MiB memory limit]`
              : '',
          ].filter(Boolean);
          const text = [run.stdout, run.stderr ? `stderr:\n${run.stderr}` : '', ...notes].filter(Boolean).join('\n');
          return {
            content: [{ type: 'text', text: text || '(no output)' }],
            isError: run.timedOut || run.truncated || run.memoryExceeded || run.exitCode !== 0,
            structuredContent: {
              stdout: run.stdout,
              stderr: run.stderr,
              exit_code: run.exitCode,
              timed_out: run.timedOut,
              truncated: run.truncated,
              memory_exceeded: run.memoryExceeded,
              duration_ms: run.durationMs,
            },
          };
        },
      });
    }
    return tools;
  }

  private async withTimeout(
    name: string,
    work: Promise<McpToolResult>,
    timeoutMs = this.options.toolTimeoutMs,
  ): Promise<McpToolResult> {
    const budget = Math.min(timeoutMs, this.options.toolTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<McpToolResult>((resolve) => {
      timer = setTimeout(() => resolve(errorResult(`Tool ${name} timed out after ${budget / 1000} s`)), budget);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private capped(result: McpToolResult): McpToolResult {
    const max = this.options.maxResultBytes;
    const size = result.content.reduce((sum, item) => sum + Buffer.byteLength(item.text, 'utf8'), 0);
    const structuredSize = result.structuredContent
      ? Buffer.byteLength(JSON.stringify(result.structuredContent), 'utf8')
      : 0;
    if (size <= max && structuredSize <= max) return result;
    const text = result.content.map((item) => item.text).join('\n');
    const cut = Buffer.from(text, 'utf8')
      .subarray(0, max)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    return {
      content: [
        { type: 'text', text: cut },
        {
          type: 'text',
          text: `[result truncated: ${Math.max(size, structuredSize)} bytes exceed the ${max}-byte limit]`,
        },
      ],
      isError: result.isError,
    };
  }
}

/** The access level an app-core function asks of its caller (0: anyone the transport let in). */
function levelOf(fn: FunctionDescription): number {
  return typeof fn.options.level === 'number' ? fn.options.level : 0;
}

function errorResult(message: string, wire?: unknown): McpToolResult {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    ...(wire ? { structuredContent: wire as Record<string, unknown> } : {}),
  };
}

function jsonResult(value: Record<string, unknown>): McpToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
    isError: false,
    structuredContent: value,
  };
}

/** The function's JSON schema, or one built from its parameter names and the types of its first sample. */
function inputSchemaOf(fn: FunctionDescription): JsonSchema {
  if (fn.schema && typeof fn.schema === 'object' && (fn.schema as { type?: unknown }).type === 'object')
    return fn.schema;
  const samples = Array.isArray(fn.options.samples) ? (fn.options.samples as Array<{ kwargs?: object }>) : [];
  const sample = (samples[0]?.kwargs ?? {}) as Record<string, unknown>;
  const properties: Record<string, JsonSchema> = {};
  fn.parameters.forEach((parameter, index) => {
    const declared = fn.parameter_types?.[index];
    const example = sample[parameter];
    const type =
      declared && ['string', 'number', 'integer', 'boolean', 'array', 'object'].includes(declared)
        ? declared
        : jsonTypeOf(example);
    properties[parameter] = type ? { type } : {};
  });
  return { type: 'object', properties } as JsonSchema;
}

function jsonTypeOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (['string', 'boolean', 'object'].includes(typeof value)) return typeof value;
  return undefined;
}
