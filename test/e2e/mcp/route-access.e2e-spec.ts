import { backends } from '../../support/backends.js';
import { startMcp, type McpUnderTest } from '../../support/mcp-under-test.js';
import { declaredRouteAccess } from '../../support/route-access.js';

/**
 * Every route of the MCP transport, both doors, with its declared access under the one AuthGuard (the
 * transport's `tb_mcp_…` keys): a new route fails this test until it is listed here.
 */
describe('MCP transport route access', () => {
  let mcp: McpUnderTest;

  beforeAll(async () => {
    mcp = await startMcp(backends()[0]);
  });

  afterAll(async () => {
    await mcp?.close();
  });

  it('declares the expected access for every route', () => {
    expect(declaredRouteAccess(mcp.app)).toEqual({
      'POST /mcp/initialize': 'mcp-key: authenticated',
      'POST /mcp/tools/list': 'mcp-key: authenticated',
      'POST /mcp/tools/call': 'mcp-key: authenticated',
      'POST /mcp/resources/list': 'mcp-key: permission read',
      'POST /mcp/resources/read': 'mcp-key: permission read',
      'GET /health': 'mcp-key: public',
      // The app core's probe routes (the network probe), public on every service that carries the core.
      'GET /api/ping': 'mcp-key: public',
      'GET /api/geo': 'mcp-key: public',
      'GET /status': 'mcp-key: authenticated',
      'GET /api/keys': 'mcp-key: permission admin',
      'POST /api/keys': 'mcp-key: permission admin',
      'DELETE /api/keys/:name': 'mcp-key: permission admin',
      'POST /mcp': 'mcp-key: authenticated',
      'GET /mcp': 'mcp-key: authenticated',
      'DELETE /mcp': 'mcp-key: authenticated',
    });
  });
});
