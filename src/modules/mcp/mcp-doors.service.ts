import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { PlatformError } from '../../common/errors.js';
import type { McpPrincipal } from './mcp-permissions.js';
import { createMcpServer, PROTOCOL_VERSIONS } from './mcp-protocol.js';
import { MCP_SESSION_STORE, type McpSession, type McpSessionStore } from './mcp-sessions.js';
import { McpToolsService, TOOLS_CHANGED } from './mcp-tools.service.js';
import { MCP_OPTIONS, type McpOptions } from './mcp.options.js';

export const SESSION_HEADER = 'mcp-session-id';

/**
 * What both doors share (who the caller is comes from the one AuthGuard's mcp-key strategy): the sessions,
 * and the standard Streamable HTTP endpoint built on the SDK in stateless mode (a server and
 * transport per request, so any process behind a load balancer can answer; sessions live in the store).
 */
@Injectable()
export class McpDoorsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Mcp');
  /** Open `GET /mcp` streams of this process, told when the tool list changes. */
  private readonly listeners = new Set<Server>();
  private readonly onToolsChanged = () => {
    for (const server of this.listeners)
      server.sendToolListChanged().catch((error: Error) => this.logger.warn(`list_changed not sent: ${error.message}`));
  };

  constructor(
    readonly tools: McpToolsService,
    @Inject(MCP_SESSION_STORE) readonly sessions: McpSessionStore,
    @Inject(MCP_OPTIONS) readonly options: McpOptions,
  ) {}

  onModuleInit(): void {
    this.tools.on(TOOLS_CHANGED, this.onToolsChanged);
  }

  async onModuleDestroy(): Promise<void> {
    this.tools.off(TOOLS_CHANGED, this.onToolsChanged);
    await Promise.all([...this.listeners].map((server) => server.close().catch(() => undefined)));
  }

  async openSession(principal: McpPrincipal, requestedVersion: unknown): Promise<McpSession> {
    const version =
      typeof requestedVersion === 'string' && (PROTOCOL_VERSIONS as readonly string[]).includes(requestedVersion)
        ? requestedVersion
        : PROTOCOL_VERSIONS[0];
    return this.sessions.open(principal.keyName, version);
  }

  /** The session named by `Mcp-Session-Id`, if any; NOT_FOUND when it is unknown, ended or expired. */
  async sessionOf(headers: IncomingHttpHeaders, principal: McpPrincipal): Promise<McpSession | undefined> {
    const id = headers[SESSION_HEADER];
    if (typeof id !== 'string' || id === '') return undefined;
    const session = await this.sessions.touch(id);
    if (!session || session.keyName !== principal.keyName)
      throw new PlatformError('NOT_FOUND', 'Session not found or expired; initialize again');
    return session;
  }

  sessionCount = (): Promise<number> => this.sessions.count();

  /**
   * `POST|GET|DELETE /mcp`: the standard Streamable HTTP endpoint, for the key the guard verified. Errors are
   * JSON-RPC error bodies (McpJsonRpcErrorFilter answers the guard's refusals the same way).
   */
  async handleStreamable(request: Request, response: Response, principal: McpPrincipal): Promise<void> {
    try {
      if (request.method === 'DELETE') {
        const id = request.headers[SESSION_HEADER];
        if (typeof id !== 'string' || id === '')
          return jsonRpcError(response, 400, 'Bad Request: Mcp-Session-Id header is required');
        const session = await this.sessionOf(request.headers, principal);
        await this.sessions.close(session!.id);
        response.status(200).end();
        return;
      }
      const body: unknown = request.body;
      const initializing = request.method === 'POST' && containsInitialize(body);
      if (initializing) {
        const params = (Array.isArray(body) ? body[0] : body) as { params?: { protocolVersion?: unknown } };
        const session = await this.openSession(principal, params.params?.protocolVersion);
        response.setHeader('Mcp-Session-Id', session.id);
      } else {
        await this.sessionOf(request.headers, principal);
      }
    } catch (error) {
      if (error instanceof PlatformError) return jsonRpcError(response, error.status, error.message);
      throw error;
    }
    const server = createMcpServer(this.tools, principal, this.options.version, this.sessionCount);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const streaming = request.method === 'GET';
    response.on('close', () => {
      if (streaming) this.listeners.delete(server);
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    if (streaming) this.listeners.add(server);
    await transport.handleRequest(request, response, request.body);
  }
}

function containsInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      message !== null && typeof message === 'object' && (message as { method?: unknown }).method === 'initialize',
  );
}

/**
 * The error body MCP clients of `/mcp` have always received: a JSON-RPC error with the HTTP status, code
 * -32001 for a refused key and -32000 for anything else (the SDK's own transport uses -32000 likewise).
 */
export function jsonRpcError(response: Response, status: number, message: string): void {
  response
    .status(status)
    .json({ jsonrpc: '2.0', error: { code: status === 401 ? -32001 : -32000, message }, id: null });
}
