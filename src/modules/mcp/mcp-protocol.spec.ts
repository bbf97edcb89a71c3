import type { McpToolsService } from './mcp-tools.service.js';
import { createMcpServer } from './mcp-protocol.js';

/** The SDK keeps the validator a Server was built with here; read to check that servers share one. */
const validatorOf = (server: object) => (server as { _jsonSchemaValidator?: unknown })._jsonSchemaValidator;

describe('createMcpServer', () => {
  const tools = {} as McpToolsService;
  const sessions = async () => 0;

  it('gives every server the same JSON Schema validator instead of a new Ajv per request', () => {
    const first = createMcpServer(tools, { keyName: 'a', permissions: ['read'] }, '1.0.0', sessions);
    const second = createMcpServer(tools, { keyName: 'b', permissions: ['read', 'execute'] }, '1.0.0', sessions);
    expect(validatorOf(first)).toBeDefined();
    expect(validatorOf(second)).toBe(validatorOf(first));
  });
});
