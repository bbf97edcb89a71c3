import { Logger, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ConfigModule } from '../config/config.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { McpToolsService, McpTransportModule, findPythonSandbox, type McpOptions } from '../modules/mcp/index.js';
import { ModsModule } from '../modules/mods/index.js';
import { appCoreOptionsFrom } from './app-core.app-module.js';
import type { HttpAppOptions } from './create-http-app.js';

export interface McpRunOptions {
  mode: 'http' | 'stdio';
  noAuth?: boolean;
}

/** The transport's options from the `mcp` configuration section (the Python sandbox is looked up once, here). */
export function mcpOptionsFrom(config: PlatformConfig, run: McpRunOptions): McpOptions {
  const mcp = config.mcp;
  return {
    version: config.version,
    mode: run.mode,
    noAuth: run.noAuth ?? false,
    toolTimeoutMs: Math.round(mcp.toolTimeoutSeconds * 1000),
    maxResultBytes: mcp.maxResultBytes,
    python: pythonSandboxFrom(config),
    pythonTimeoutMs: Math.round(mcp.pythonTimeoutSeconds * 1000),
    pythonMaxOutputBytes: mcp.pythonMaxOutputBytes,
    sessionIdleMs: Math.round(mcp.sessionIdleSeconds * 1000),
    maxSessions: mcp.maxSessions,
    modsRescanMs: Math.round(mcp.modsRescanSeconds * 1000),
  };
}

/** `python_execute`'s sandbox, or null when MCP_PYTHON=off or pyodide is not installed (the tool is then absent). */
function pythonSandboxFrom(config: PlatformConfig): McpOptions['python'] {
  if (config.mcp.python !== 'pyodide') return null;
  const pyodideDirectory = findPythonSandbox();
  if (!pyodideDirectory) {
    new Logger('McpTransport').warn('python_execute is off: the pyodide package (its sandbox) is not installed');
    return null;
  }
  return { pyodideDirectory, memoryMb: config.mcp.pythonMemoryMb, concurrency: config.mcp.pythonConcurrency };
}

/** The MCP transport (issue 14): `tb mcp`, port 8765, the REST door, `/mcp` (Streamable HTTP) or stdio. */
@Module({})
export class McpAppModule {
  static forRoot(config: PlatformConfig, run: McpRunOptions): DynamicModule {
    assertConfiguredFor(config, 'mcp');
    const core = ModsModule.forRoot({
      appCore: appCoreOptionsFrom(config),
      modsDir: config.appCore.modsDir,
      hostVersion: config.version,
    });
    return {
      module: McpAppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        McpTransportModule.forRoot(mcpOptionsFrom(config, run), core, { http: run.mode === 'http' }),
      ],
    };
  }
}

/** The MCP transport's HTTP choices: the registry's error body, Swagger at /api/docs, CORS set up by `secureMcpHttp`. */
export function mcpHttpAppOptions(config: PlatformConfig): HttpAppOptions {
  return {
    title: 'Toolbox Platform — MCP transport',
    description:
      'The application core as MCP tools: the REST door (/mcp/initialize, /mcp/tools/…, /mcp/resources/…, /api/keys) and the standard Streamable HTTP endpoint /mcp. Keys: Authorization: Bearer tb_mcp_… or X-API-Key.',
    debug: config.debug,
    log: config.log,
    errorFormat: 'registry',
    docsPath: 'api/docs',
    apiVersion: config.version,
    bodyLimit: '4mb',
    cors: false,
    auth: { strategies: ['api-key'] },
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase());
}

/** The host name of a `Host` header or an origin URL, without port. */
function hostnameOf(value: string): string | null {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Before every route: DNS-rebinding protection when bound to loopback (a browser page of another site
 * may not reach the server: its `Origin` and `Host` must be loopback names, else 403), CORS exposing
 * `Mcp-Session-Id`, and the request counters `/status` reports.
 */
export function secureMcpHttp(app: INestApplication, config: PlatformConfig): void {
  const tools = app.get(McpToolsService);
  const loopbackOnly = isLoopback(config.mcp.host);
  app.enableCors({
    origin: config.mcp.corsOrigins.includes('*') ? '*' : config.mcp.corsOrigins,
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'Content-Type',
      'Authorization',
      'X-API-Key',
      'Mcp-Session-Id',
      'MCP-Protocol-Version',
      'Last-Event-ID',
    ],
    exposedHeaders: ['Mcp-Session-Id', 'MCP-Protocol-Version'],
  });
  app.use((request: Request, response: Response, next: NextFunction) => {
    if (loopbackOnly) {
      const origin = request.headers.origin;
      const host = request.headers.host;
      const badOrigin = typeof origin === 'string' && origin !== 'null' && !isLoopback(hostnameOf(origin) ?? '');
      const badHost = typeof host === 'string' && !isLoopback(hostnameOf(host) ?? '');
      if (badOrigin || badHost) {
        response.status(403).json({
          code: 'FORBIDDEN',
          message: `Refused ${badOrigin ? `Origin ${origin}` : `Host ${host}`}: this server answers localhost only (DNS-rebinding protection)`,
        });
        return;
      }
    }
    const started = performance.now();
    response.on('finish', () => tools.stats.recordRequest(performance.now() - started, response.statusCode >= 400));
    next();
  });
}
