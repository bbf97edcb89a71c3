import { Logger, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import type { NextFunction, Request, Response } from 'express';
import { ConfigModule } from '../config/config.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { PlatformError } from '../common/errors.js';
import {
  McpToolsService,
  McpTransportModule,
  findPythonSandbox,
  isLoopbackHost,
  mcpOriginRule,
  type McpOptions,
} from '../modules/mcp/index.js';
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

/** Both doors take the transport's `tb_mcp_…` keys; a request without one reads what MCP clients always have. */
const MCP_AUTH: AuthModuleOptions = {
  strategies: ['mcp-key'],
  messages: { credentialRequired: 'An MCP API key is required (Authorization: Bearer or X-API-Key)' },
};

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

/** The MCP transport: `tb mcp`, port 8765, the REST door, `/mcp` (Streamable HTTP) or stdio. */
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
        AuthModule.forRoot(MCP_AUTH),
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
    trustProxy: config.trustProxy,
    errorFormat: 'registry',
    docsPath: 'api/docs',
    apiVersion: config.version,
    bodyLimit: '4mb',
    cors: false,
    auth: MCP_AUTH,
  };
}

/** The host name of a `Host` header, without port. */
function hostnameOf(value: string): string | null {
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Before every route: the `Origin` of a browser request must be allowed (`mcpOriginRule`: loopback pages and
 * MCP_CORS_ORIGINS, never `null`), else 403 — a request without one (an MCP client, curl) passes; when bound to
 * loopback the `Host` must be a loopback name too (DNS rebinding: a foreign page resolved to 127.0.0.1 still
 * sends its own name), else 403. Then CORS for the allowed origins, answered with that origin (never `*`) and
 * no credentials (keys travel in headers), exposing `Mcp-Session-Id`; then the request counters of `/status`.
 */
export function secureMcpHttp(app: INestApplication, config: PlatformConfig): void {
  const tools = app.get(McpToolsService);
  const loopbackOnly = isLoopbackHost(config.mcp.host);
  const originAllowed = mcpOriginRule(config.mcp.corsOrigins);
  app.use((request: Request, _response: Response, next: NextFunction) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !originAllowed(origin))
      return next(
        new PlatformError(
          'FORBIDDEN',
          `Refused Origin ${origin}: web pages may call this server only from loopback origins or MCP_CORS_ORIGINS`,
        ),
      );
    const host = request.headers.host;
    if (loopbackOnly && typeof host === 'string' && !isLoopbackHost(hostnameOf(host) ?? ''))
      return next(
        new PlatformError(
          'FORBIDDEN',
          `Refused Host ${host}: this server answers localhost only (DNS-rebinding protection)`,
        ),
      );
    next();
  });
  app.enableCors({
    origin: (origin: string | undefined, answer: (error: Error | null, allow?: boolean) => void) =>
      answer(null, origin !== undefined && originAllowed(origin)),
    credentials: false,
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
  app.use((_request: Request, response: Response, next: NextFunction) => {
    const started = performance.now();
    response.on('finish', () => tools.stats.recordRequest(performance.now() - started, response.statusCode >= 400));
    next();
  });
}
