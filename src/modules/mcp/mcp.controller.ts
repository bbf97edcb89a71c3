import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public, RequirePermission } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { PlatformError } from '../../common/errors.js';
import { McpDoorsService } from './mcp-doors.service.js';
import { McpJsonRpcErrorFilter } from './mcp-json-rpc-error.filter.js';
import { McpKeysService } from './mcp-keys.service.js';
import { METHOD_PERMISSIONS, type McpPrincipal } from './mcp-permissions.js';
import { SERVER_CAPABILITIES, SERVER_NAME } from './mcp-protocol.js';
import {
  CreatedMcpKeyDto,
  HealthDto,
  InitializeResponseDto,
  JsonRpcResponseDto,
  McpKeyListDto,
  ResourceListDto,
  ResourceReadDto,
  RevokedMcpKeyDto,
  StatusDto,
  ToolCallResultDto,
  ToolListDto,
} from './mcp.responses.js';

const KEY_WARNING = 'Store this key now: it is shown once and only its SHA-256 hash is kept.';

/** A JSON body that must be an object (`[]`, `"x"` and `null` are refused with 400, never a 500). */
function objectBody(body: unknown, required = false): Record<string, unknown> {
  if (body === undefined && !required) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new PlatformError('BAD_REQUEST', 'The request body must be a JSON object');
  return body as Record<string, unknown>;
}

/**
 * The REST door with the original's payloads, and the standard MCP endpoint `/mcp` (Streamable
 * HTTP). Every route but `/health` needs a key (`Authorization: Bearer tb_mcp_…` or `X-API-Key`), checked by
 * the one AuthGuard (mcp-key strategy); what a route needs beyond a key is declared on it.
 */
@ApiTags('mcp')
@ApiBearerAuth()
@ApiSecurity('api_key')
@Controller()
export class McpController {
  constructor(
    private readonly doors: McpDoorsService,
    private readonly keys: McpKeysService,
  ) {}

  @Post('mcp/initialize')
  @HttpCode(200)
  @ApiOperation({ summary: 'Opens a session (1 h idle expiry) and tells what the key may do' })
  @ApiBody({ required: false, schema: { type: 'object', properties: { protocol_version: { type: 'string' } } } })
  @ApiOkResponse({ type: InitializeResponseDto })
  async initialize(@CurrentCaller() principal: McpPrincipal, @Body() body: unknown): Promise<InitializeResponseDto> {
    const input = objectBody(body);
    const session = await this.doors.openSession(principal, input.protocol_version ?? input.protocolVersion);
    return {
      session_id: session.id,
      protocol_version: session.protocolVersion,
      server_info: { name: SERVER_NAME, version: this.doors.options.version },
      capabilities: SERVER_CAPABILITIES,
      permissions: principal.permissions,
    };
  }

  @Post('mcp/tools/list')
  @HttpCode(200)
  @ApiOperation({ summary: 'The tools the key may use' })
  @ApiOkResponse({ type: ToolListDto })
  async listTools(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Body() body: unknown,
  ): Promise<ToolListDto> {
    objectBody(body);
    await this.doors.sessionOf(request.headers, principal);
    return { tools: this.doors.tools.listTools(principal) };
  }

  @Post('mcp/tools/call')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Calls a tool: 200 with isError true when it fails, 404 for an unknown tool, 403 for one the key may not use',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, arguments: { type: 'object' } },
    },
  })
  @ApiOkResponse({ type: ToolCallResultDto })
  async callTool(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Body() body: unknown,
  ): Promise<ToolCallResultDto> {
    const input = objectBody(body, true);
    await this.doors.sessionOf(request.headers, principal);
    return this.doors.tools.callTool(principal, input.name, input.arguments);
  }

  @Post('mcp/resources/list')
  @HttpCode(200)
  @RequirePermission(METHOD_PERMISSIONS['resources/list'])
  @ApiOperation({ summary: 'Resources (status, performance, docs guides); needs read' })
  @ApiOkResponse({ type: ResourceListDto })
  async listResources(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Body() body: unknown,
  ): Promise<ResourceListDto> {
    objectBody(body);
    await this.doors.sessionOf(request.headers, principal);
    return { resources: this.doors.tools.listResources() };
  }

  @Post('mcp/resources/read')
  @HttpCode(200)
  @RequirePermission(METHOD_PERMISSIONS['resources/read'])
  @ApiOperation({ summary: 'Reads a resource by uri (unknown uri: 404); needs read' })
  @ApiBody({ schema: { type: 'object', required: ['uri'], properties: { uri: { type: 'string' } } } })
  @ApiOkResponse({ type: ResourceReadDto })
  async readResource(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Body() body: unknown,
  ): Promise<ResourceReadDto> {
    const input = objectBody(body, true);
    await this.doors.sessionOf(request.headers, principal);
    return this.doors.tools.readResource(principal, input.uri, this.doors.sessionCount);
  }

  @Get('health')
  @Public()
  @ApiOperation({ summary: 'Liveness, without a key' })
  @ApiOkResponse({ type: HealthDto })
  health(): HealthDto {
    return {
      status: 'healthy',
      server: SERVER_NAME,
      version: this.doors.options.version,
      mode: this.doors.options.mode,
      uptime_seconds: this.doors.tools.stats.uptimeSeconds(),
      initialized: true,
    };
  }

  @Get('status')
  @ApiOperation({ summary: 'Request count, average latency, errors, cache hit rate, sessions (any key)' })
  @ApiOkResponse({ type: StatusDto })
  async status(): Promise<StatusDto> {
    return { ...this.health(), ...(await this.doors.tools.status(this.doors.sessionCount)) } as unknown as StatusDto;
  }

  @Get('api/keys')
  @RequirePermission('admin')
  @ApiOperation({ summary: 'Lists the keys (admin); never the keys themselves' })
  @ApiOkResponse({ type: McpKeyListDto })
  async listKeys(): Promise<McpKeyListDto> {
    return { keys: await this.keys.list() };
  }

  @Post('api/keys')
  @RequirePermission('admin')
  @ApiOperation({ summary: 'Creates a key (admin): shown once; permissions default to ["read"]' })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string' },
        permissions: { type: 'array', items: { type: 'string', enum: ['read', 'write', 'execute', 'admin'] } },
      },
    },
  })
  @ApiCreatedResponse({ type: CreatedMcpKeyDto })
  async createKey(@Body() body: unknown): Promise<CreatedMcpKeyDto> {
    const input = objectBody(body, true);
    const { key, info } = await this.keys.create(input.name, input.permissions ?? ['read']);
    return { api_key: key, name: info.name, permissions: info.permissions, warning: KEY_WARNING };
  }

  @Delete('api/keys/:name')
  @RequirePermission('admin')
  @ApiOperation({ summary: 'Revokes a key by name (admin); 404 when there is none' })
  @ApiOkResponse({ type: RevokedMcpKeyDto })
  async revokeKey(@Param('name') name: string): Promise<RevokedMcpKeyDto> {
    await this.keys.revoke(name);
    return { revoked: name };
  }

  /** The standard MCP endpoint (Streamable HTTP, JSON-RPC 2.0 on the official SDK, stateless). */
  @Post('mcp')
  @ApiOperation({
    summary:
      'Standard MCP endpoint (Streamable HTTP): one JSON-RPC message or batch; initialize answers Mcp-Session-Id',
  })
  @ApiBody({ schema: { type: 'object', description: 'JSON-RPC 2.0 request, notification or batch' } })
  @ApiOkResponse({ type: JsonRpcResponseDto, description: 'JSON-RPC response (202 without body for notifications)' })
  @UseFilters(McpJsonRpcErrorFilter)
  async streamablePost(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.doors.handleStreamable(request, response, principal);
  }

  @Get('mcp')
  @ApiOperation({ summary: 'Server-to-client event stream (notifications/tools/list_changed)' })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'text/event-stream of JSON-RPC notifications' })
  @UseFilters(McpJsonRpcErrorFilter)
  async streamableGet(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.doors.handleStreamable(request, response, principal);
  }

  @Delete('mcp')
  @ApiOperation({ summary: 'Ends the session named by Mcp-Session-Id (404 when unknown or expired)' })
  @ApiOkResponse({ description: 'Session ended' })
  @UseFilters(McpJsonRpcErrorFilter)
  async streamableDelete(
    @CurrentCaller() principal: McpPrincipal,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.doors.handleStreamable(request, response, principal);
  }
}
