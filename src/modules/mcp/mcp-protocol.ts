import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PlatformError } from '../../common/errors.js';
import { assertMethodPermission, type McpPrincipal } from './mcp-permissions.js';
import type { McpToolsService } from './mcp-tools.service.js';

export const SERVER_NAME = 'toolbox-mcp';
/** The protocol revisions the transport is built and tested for (the SDK also answers 2024-11-05 clients). */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
/** MCP's "resource not found" error code. */
const RESOURCE_NOT_FOUND = -32002;

export const SERVER_CAPABILITIES = { tools: { listChanged: true }, resources: {} } as const;

/**
 * The JSON Schema validator every server shares. The SDK builds an Ajv instance per Server unless given one,
 * and the standard door builds a Server per request: that instance was a tenth of a tools/call's CPU time.
 * The servers only use it to check elicitation answers, which they never ask for; one instance serves all.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * An MCP server (the SDK's) answering for one principal: the standard door builds one per request
 * (stateless), stdio one per process. The catalogue, filter and call path are McpToolsService's.
 */
export function createMcpServer(
  tools: McpToolsService,
  principal: McpPrincipal,
  version: string,
  sessions: () => Promise<number>,
): Server {
  const server = new Server(
    { name: SERVER_NAME, version },
    {
      capabilities: SERVER_CAPABILITIES,
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
      instructions:
        'Toolbox Platform: the application core functions as tools. toolbox_search finds functions, toolbox_execute runs any of them.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.listTools(principal) as never }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    asProtocolError(async () => {
      const result = await tools.callTool(principal, request.params.name, request.params.arguments ?? {});
      return { ...result } as Record<string, unknown> & typeof result;
    }),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () =>
    asProtocolError(async () => {
      assertMethodPermission(principal, 'resources/list');
      return { resources: tools.listResources() };
    }),
  );
  server.setRequestHandler(ReadResourceRequestSchema, async (request) =>
    asProtocolError(async () => {
      assertMethodPermission(principal, 'resources/read');
      return tools.readResource(principal, request.params.uri, sessions);
    }),
  );
  return server;
}

async function asProtocolError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    if (error.code === 'NOT_FOUND' && error.message.startsWith('Unknown resource'))
      throw new McpError(RESOURCE_NOT_FOUND, error.message);
    throw new McpError(ErrorCode.InvalidParams, error.message);
  }
}
