import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import { PERMISSIONS } from '../../auth/permissions.js';
import { PlatformError } from '../../common/errors.js';
import { McpKeysService } from './mcp-keys.service.js';
import type { McpPrincipal } from './mcp-permissions.js';
import { createMcpServer, PROTOCOL_VERSIONS } from './mcp-protocol.js';
import { MCP_SESSION_STORE, type McpSession, type McpSessionStore } from './mcp-sessions.js';
import { McpToolsService, TOOLS_CHANGED } from './mcp-tools.service.js';
import { MCP_OPTIONS, type McpOptions } from './mcp.options.js';

export const SESSION_HEADER = 'mcp-session-id';
/** `--no-auth`: the one caller is the operator of a localhost server. */
const NO_AUTH_PRINCIPAL: McpPrincipal = Object.freeze({ keyName: '-', permissions: [...PERMISSIONS] });

/**
 * What both doors share: who the caller is (the key from `Authorization: Bearer` or `X-API-Key`), the
 * sessions, and the standard Streamable HTTP endpoint built on the SDK in stateless mode (a server and
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
    private readonly keys: McpKeysService,
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

  /** The caller's principal; UNAUTHORIZED without a valid key (unless `--no-auth`). */
  async authenticate(headers: IncomingHttpHeaders): Promise<McpPrincipal> {
    if (this.options.noAuth) return NO_AUTH_PRINCIPAL;
    return this.keys.verify(presentedKey(headers));
  }

  requireAdmin(principal: McpPrincipal): void {
    if (!principal.permissions.includes('admin'))
      throw new PlatformError('FORBIDDEN', 'Managing keys needs the admin permission');
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

  /** `POST|GET|DELETE /mcp`: the standard Streamable HTTP endpoint. Errors are JSON-RPC error bodies. */
  async handleStreamable(request: Request, response: Response): Promise<void> {
    let principal: McpPrincipal;
    try {
      principal = await this.authenticate(request.headers);
      if (request.method === 'DELETE') {
        const id = request.headers[SESSION_HEADER];
        if (typeof id !== 'string' || id === '')
          return jsonRpcError(response, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
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
      if (error instanceof PlatformError)
        return jsonRpcError(response, error.status, error.status === 401 ? -32001 : -32000, error.message);
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

/** The key from `Authorization: Bearer …` or `X-API-Key`. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

function containsInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      message !== null && typeof message === 'object' && (message as { method?: unknown }).method === 'initialize',
  );
}

function jsonRpcError(response: Response, status: number, code: number, message: string): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}
