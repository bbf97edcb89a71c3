import { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpToolsService } from '../../../src/modules/mcp/index.js';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { installHelloMod, startMcp, type McpUnderTest } from '../../support/mcp-under-test.js';

describe.each(backends())('MCP transport, standard Streamable HTTP endpoint /mcp, on $name', (backend) => {
  let mcp: McpUnderTest;
  let reader: string;
  let admin: string;
  const clients: Client[] = [];

  async function connect(key: string, header: 'bearer' | 'x-api-key' = 'bearer', protocolVersion?: string) {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    const headers: Record<string, string> =
      header === 'bearer' ? { Authorization: `Bearer ${key}` } : { 'X-API-Key': key };
    const transport = new StreamableHTTPClientTransport(new URL(`${mcp.baseUrl}/mcp`), {
      requestInit: { headers },
    });
    if (protocolVersion) transport.setProtocolVersion(protocolVersion);
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, { MCP_TOOL_TIMEOUT_SECONDS: '1' });
    reader = await mcp.key('reader', ['read']);
    admin = await mcp.key('admin', ['admin']);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await mcp?.close();
  });

  it('initializes with the SDK client and gets a session id from the shared store', async () => {
    const { client, transport } = await connect(reader);
    expect(client.getServerVersion()).toMatchObject({ name: 'toolbox-mcp', version: mcp.config.version });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: {} });
    expect(transport.sessionId).toMatch(/^[0-9a-f]{48}$/);
    expect(['2025-11-25', '2025-06-18', '2025-03-26']).toContain(transport.protocolVersion);
  });

  it('lists and calls tools with the same permission filter as the REST door', async () => {
    const { client } = await connect(reader, 'x-api-key');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['toolbox_execute', 'docs_reader', 'core_ping', 'limits_echo']));
    expect(names).not.toContain('docs_writer');
    expect(names).not.toContain('python_execute');
    expect(names).not.toContain('limits_adminReport');
    const echo = await client.callTool({ name: 'limits_echo', arguments: { text: 'sdk' } });
    expect(echo.isError).toBe(false);
    expect(JSON.parse((echo.content as Array<{ text: string }>)[0].text)).toEqual({ text: 'sdk' });
    await expect(client.callTool({ name: 'limits_adminReport', arguments: {} })).rejects.toThrow(/may not use/);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    const failed = await client.callTool({ name: 'limits_fail', arguments: {} });
    expect(failed.isError).toBe(true);
  });

  it('reads resources, and answers an unknown uri with a protocol error', async () => {
    const { client } = await connect(reader);
    const uris = (await client.listResources()).resources.map((resource) => resource.uri);
    expect(uris).toEqual(['toolbox://status', 'toolbox://performance', 'toolbox://docs/guides']);
    const status = await client.readResource({ uri: 'toolbox://performance' });
    expect(JSON.parse((status.contents[0] as { text: string }).text)).toHaveProperty('request_count');
    await expect(client.readResource({ uri: 'toolbox://missing' })).rejects.toThrow(/Unknown resource/);
  });

  it.each(['2025-03-26', '2025-06-18', '2025-11-25'])('speaks protocol version %s', async (version) => {
    const response = await fetch(`${mcp.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reader}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toMatch(/^[0-9a-f]{48}$/);
    expect(((await response.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
  });

  it('refuses resources/list to a key without read with a protocol error naming the permission', async () => {
    const { client } = await connect(await mcp.key('execute-only-sdk', ['execute']));
    await expect(client.listResources()).rejects.toThrow(/Permission "read" required/);
    await expect(client.readResource({ uri: 'toolbox://status' })).rejects.toThrow(/Permission "read" required/);
  });

  it('answers a request without a key with the JSON-RPC error body MCP clients read', async () => {
    const response = await fetch(`${mcp.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'An MCP API key is required (Authorization: Bearer or X-API-Key)' },
      id: null,
    });
  });

  it('refuses a missing or revoked key with 401', async () => {
    await expect(connect(`tb_mcp_${'f'.repeat(32)}`)).rejects.toThrow();
    const response = await fetch(`${mcp.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
  });

  it('ends a session with DELETE /mcp; the id is 404 afterwards', async () => {
    const { transport } = await connect(reader);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const response = await fetch(`${mcp.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reader}`,
        'mcp-session-id': sessionId,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
  });

  it.each([['{"jsonrpc": '], ['[1, 2]'], ['{"not": "json-rpc"}']])(
    'answers the body %s with 400, never 500',
    async (body) => {
      const response = await fetch(`${mcp.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${reader}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      expect(response.status).toBe(400);
    },
  );

  it('refuses a browser page of another origin (DNS rebinding) with 403', async () => {
    const response = await fetch(`${mcp.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reader}`,
        origin: 'http://attacker.example',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(403);
  });

  it('stops a slow tool at the timeout with isError', async () => {
    const { client } = await connect(admin);
    const result = await client.callTool({ name: 'limits_sleep', arguments: { ms: 2500 } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0].text).toMatch(/timed out/);
    await new Promise((resolve) => setTimeout(resolve, 1600));
  });

  it("lists an installed mod's tools and tells connected clients tools/list_changed", async () => {
    const { client } = await connect(reader);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    // Give the client's GET stream a moment to open.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('hello_greet');
    await installHelloMod(mcp.modsDir);
    await mcp.app.get(McpToolsService).rescanMods();
    await eventually(
      async () => changed,
      (count) => count > 0,
    );
    expect(changed).toBeGreaterThan(0);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('hello_greet');
    const greeting = await client.callTool({ name: 'hello_greet', arguments: { name: 'Ada' } });
    expect(greeting.isError).toBe(false);
    expect((greeting.content as Array<{ text: string }>)[0].text).toContain('Ada');
  });
});
