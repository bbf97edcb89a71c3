/** Public API of the MCP transport: the module, its services and the protocol server factory. */
export { McpTransportModule } from './mcp.module.js';
export { MCP_OPTIONS, type McpOptions, type McpPythonOptions } from './mcp.options.js';
export { McpKeysService, MCP_KEY_PREFIX, hashMcpKey, type McpKeyInfo } from './mcp-keys.service.js';
export { McpToolsService, TOOLS_CHANGED, type McpTool, type McpToolResult } from './mcp-tools.service.js';
export { McpDoorsService } from './mcp-doors.service.js';
export { McpKeyStrategy } from './mcp-key.strategy.js';
export { createMcpServer, PROTOCOL_VERSIONS, SERVER_NAME } from './mcp-protocol.js';
export {
  callerFor,
  mayUseTool,
  NO_AUTH_PRINCIPAL,
  permissionForTool,
  presentedKey,
  toolNameFor,
  type McpPrincipal,
} from './mcp-permissions.js';
export { isLoopbackHost, mcpOriginRule } from './mcp-origins.js';
export { MCP_SESSION_STORE, type McpSessionStore } from './mcp-sessions.js';
export { findPythonSandbox, PythonRunner, type PythonRun } from './python-runner.js';
export { McpKeyEntity, McpSessionEntity } from './mcp-key.entity.js';
