import { request as httpRequest } from 'node:http';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CommandIo } from '../../../src/cli/command-io.js';
import { runMcpCommand } from '../../../src/cli/mcp.command.js';
import { findPythonSandbox, hashMcpKey } from '../../../src/modules/mcp/index.js';
import { backends } from '../../support/backends.js';
import { startMcp, type McpUnderTest } from '../../support/mcp-under-test.js';

const hasPython = findPythonSandbox() !== null;

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

describe.each(backends())('MCP transport, REST door, on $name', (backend) => {
  let mcp: McpUnderTest;
  let admin: string;
  let reader: string;
  let writer: string;
  let executor: string;

  async function call(
    method: string,
    path: string,
    key?: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${mcp.baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed as any, headers: response.headers } satisfies Answer;
  }
  const post = (path: string, key?: string, body: unknown = {}, headers?: Record<string, string>) =>
    call('POST', path, key, body, headers);
  const toolNames = async (key: string) =>
    ((await post('/mcp/tools/list', key)).body.tools as Array<{ name: string }>).map((tool) => tool.name);

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, {
      MCP_PYTHON: 'pyodide',
      MCP_TOOL_TIMEOUT_SECONDS: '1',
      MCP_PYTHON_TIMEOUT_SECONDS: '1',
      MCP_PYTHON_MAX_OUTPUT_BYTES: '1000',
      MCP_MAX_RESULT_BYTES: '4096',
      MCP_SESSION_IDLE_SECONDS: '2',
    });
    admin = await mcp.key('admin', ['admin']);
    reader = await mcp.key('reader', ['read']);
    writer = await mcp.key('writer', ['read', 'write']);
    executor = await mcp.key('executor', ['read', 'execute']);
  });

  afterAll(async () => {
    await mcp?.close();
  });

  describe('keys on every route', () => {
    it('answers /health without a key, with an uptime that grows', async () => {
      const first = await call('GET', '/health');
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status: 'healthy', server: 'toolbox-mcp', mode: 'http', initialized: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await call('GET', '/health')).body.uptime_seconds).toBeGreaterThan(first.body.uptime_seconds);
    });

    it('accepts the key as a bearer token and as X-API-Key', async () => {
      expect((await post('/mcp/tools/list', reader)).status).toBe(200);
      expect((await post('/mcp/tools/list', undefined, {}, { 'x-api-key': reader })).status).toBe(200);
    });

    it.each([
      ['no key', undefined],
      ['a malformed key', 'not-a-key'],
      ['an unknown key', `tb_mcp_${'0'.repeat(32)}`],
      ['a JWT-looking token', 'eyJhbGciOiJIUzI1NiJ9.e30.x'],
    ])('refuses %s with 401', async (_label, key) => {
      const answer = await post('/mcp/tools/list', key);
      expect([answer.status, answer.body.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await call('GET', '/status', key)).status).toBe(401);
    });

    it('reports request count, latency, errors, cache hit rate and sessions on /status (any key)', async () => {
      const answer = await call('GET', '/status', reader);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        status: 'healthy',
        request_count: expect.any(Number),
        average_latency_ms: expect.any(Number),
        error_count: expect.any(Number),
        cache_hit_rate: expect.any(Number),
        sessions: expect.any(Number),
      });
      expect(answer.body.request_count).toBeGreaterThan(0);
      expect(answer.body.error_count).toBeGreaterThan(0);
    });
  });

  describe('bad bodies', () => {
    it('answers 400, never 500, for bad JSON', async () => {
      const answer = await post('/mcp/tools/call', reader, '{"name": ');
      expect(answer.status).toBe(400);
    });

    it.each([['[1, 2]'], ['"text"'], ['42'], ['null']])('answers 400 for the JSON body %s', async (body) => {
      const answer = await post('/mcp/tools/call', reader, body);
      expect(answer.status).toBe(400);
    });

    it('answers 400 when arguments is not an object', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'toolbox_status', arguments: [1] });
      expect([answer.status, answer.body.code]).toEqual([400, 'BAD_REQUEST']);
    });
  });

  describe('initialize and sessions', () => {
    it('opens a session with the protocol version, server info, capabilities and permissions', async () => {
      const answer = await post('/mcp/initialize', writer, { protocol_version: '2025-06-18' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        session_id: expect.stringMatching(/^[0-9a-f]{48}$/),
        protocol_version: '2025-06-18',
        server_info: { name: 'toolbox-mcp', version: mcp.config.version },
        capabilities: { tools: { listChanged: true }, resources: {} },
        permissions: ['read', 'write'],
      });
      const listed = await post('/mcp/tools/list', writer, {}, { 'mcp-session-id': answer.body.session_id });
      expect(listed.status).toBe(200);
    });

    it('expires an idle session (404 afterwards) and refuses another key using it', async () => {
      const { body } = await post('/mcp/initialize', reader);
      const session = { 'mcp-session-id': body.session_id };
      expect((await post('/mcp/tools/list', executor, {}, session)).status).toBe(404);
      expect((await post('/mcp/tools/list', reader, {}, session)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2300));
      const expired = await post('/mcp/tools/list', reader, {}, session);
      expect([expired.status, expired.body.code]).toEqual([404, 'NOT_FOUND']);
    });
  });

  describe('permissions on list and call', () => {
    it('shows a read key toolbox_execute and docs_reader, but no python, writer or admin tools', async () => {
      const names = await toolNames(reader);
      expect(names).toEqual(expect.arrayContaining(['toolbox_execute', 'toolbox_status', 'toolbox_info']));
      expect(names).toEqual(expect.arrayContaining(['toolbox_search', 'docs_reader', 'source_code_lookup']));
      expect(names).toEqual(expect.arrayContaining(['core_ping', 'limits_echo']));
      expect(names).not.toContain('python_execute');
      expect(names).not.toContain('docs_writer');
      expect(names).not.toContain('limits_adminReport');
    });

    it('refuses on call what it does not list (403), and 404 for an unknown tool', async () => {
      expect((await post('/mcp/tools/call', reader, { name: 'docs_writer', arguments: {} })).status).toBe(403);
      expect((await post('/mcp/tools/call', reader, { name: 'limits_adminReport' })).status).toBe(403);
      const unknown = await post('/mcp/tools/call', reader, { name: 'no_such_tool' });
      expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
    });

    it('gives docs_writer to a write key and python_execute to an execute key only', async () => {
      expect(await toolNames(writer)).toContain('docs_writer');
      expect(await toolNames(writer)).not.toContain('python_execute');
      if (hasPython) expect(await toolNames(executor)).toContain('python_execute');
      expect(await toolNames(executor)).not.toContain('docs_writer');
    });

    it('gives an admin key every tool, the level -1 function included', async () => {
      const names = await toolNames(admin);
      expect(names).toEqual(expect.arrayContaining(['docs_writer', 'limits_adminReport', 'toolbox_execute']));
      if (hasPython) expect(names).toContain('python_execute');
      const answer = await post('/mcp/tools/call', admin, { name: 'limits_adminReport', arguments: {} });
      expect(answer.body).toMatchObject({
        isError: false,
        structuredContent: { result: { data: { secret: 'admins only' } } },
      });
    });

    it('keeps toolbox_execute within the same rules: a read key cannot run an admin function through it', async () => {
      const answer = await post('/mcp/tools/call', reader, {
        name: 'toolbox_execute',
        arguments: { module: 'limits', function: 'adminReport' },
      });
      expect([answer.status, answer.body.isError]).toEqual([200, true]);
      expect(JSON.stringify(answer.body)).not.toContain('admins only');
    });
  });

  describe('tools', () => {
    it('runs an app-core function and returns its Result as text and structuredContent', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'limits_echo', arguments: { text: 'hi' } });
      expect(answer.status).toBe(200);
      expect(answer.body.isError).toBe(false);
      expect(JSON.parse(answer.body.content[0].text)).toEqual({ text: 'hi' });
      expect(answer.body.structuredContent).toMatchObject({ error: 'none', result: { data: { text: 'hi' } } });
    });

    it('refuses through toolbox_execute a function registered with api: false, even to an admin key', async () => {
      const answer = await post('/mcp/tools/call', admin, {
        name: 'toolbox_execute',
        arguments: { module: 'limits', function: 'internalState' },
      });
      expect([answer.status, answer.body.isError]).toEqual([200, true]);
      expect(answer.body.content[0].text).toContain("not a function of the application core's API");
      expect(JSON.stringify(answer.body)).not.toContain('not for callers');
    });

    it('runs any function through toolbox_execute with args and kwargs', async () => {
      const answer = await post('/mcp/tools/call', reader, {
        name: 'toolbox_execute',
        arguments: { module: 'limits', function: 'echo', kwargs: { text: 'via execute' } },
      });
      expect(answer.body).toMatchObject({ isError: false });
      expect(answer.body.content[0].text).toContain('via execute');
    });

    it('answers a failing tool with 200 and isError true', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'limits_fail', arguments: {} });
      expect([answer.status, answer.body.isError]).toEqual([200, true]);
    });

    it('stops a tool at the timeout with a clear message', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'limits_sleep', arguments: { ms: 2500 } });
      expect([answer.status, answer.body.isError]).toEqual([200, true]);
      expect(answer.body.content[0].text).toMatch(/timed out after 1 s/);
      await new Promise((resolve) => setTimeout(resolve, 1600)); // let the abandoned call finish before teardown
    });

    it('caps a large result with a clear message', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'limits_big', arguments: { n: 20_000 } });
      expect(answer.status).toBe(200);
      expect(Buffer.byteLength(answer.body.content[0].text)).toBeLessThanOrEqual(4096);
      expect(answer.body.content[1].text).toMatch(/result truncated: .* exceed the 4096-byte limit/);
    });

    it('finds functions with toolbox_search and describes modules with toolbox_info', async () => {
      const search = await post('/mcp/tools/call', reader, { name: 'toolbox_search', arguments: { query: 'sleep' } });
      expect(JSON.parse(search.body.content[0].text).results[0].key).toBe('limits.sleep');
      const info = await post('/mcp/tools/call', reader, { name: 'toolbox_info', arguments: { module: 'limits' } });
      expect(Object.keys(JSON.parse(info.body.content[0].text).modules)).toEqual(['limits']);
    });

    it('reads the docs with docs_reader', async () => {
      const answer = await post('/mcp/tools/call', reader, { name: 'docs_reader', arguments: { query: 'Claude' } });
      expect([answer.status, answer.body.isError]).toEqual([200, false]);
      expect(answer.body.content[0].text).toContain('Claude');
    });

    (hasPython ? describe : describe.skip)('python_execute', () => {
      it('runs code in a separate process without the server environment', async () => {
        const answer = await post('/mcp/tools/call', executor, {
          name: 'python_execute',
          arguments: { code: 'import os\nprint(6 * 7)\nprint(sorted(os.environ.keys()))\nprint(os.getcwd())' },
        });
        expect(answer.body.isError).toBe(false);
        expect(answer.body.structuredContent.stdout).toContain('42');
        expect(answer.body.structuredContent.stdout).not.toContain('DATABASE_URL');
        expect(answer.body.structuredContent.stdout).not.toContain('MCP_');
        expect(answer.body.structuredContent.stdout).toContain('tb-mcp-python-');
      });

      it('stops at the timeout', async () => {
        const answer = await post('/mcp/tools/call', executor, {
          name: 'python_execute',
          arguments: { code: 'import time\ntime.sleep(10)' },
        });
        expect(answer.body).toMatchObject({ isError: true, structuredContent: { timed_out: true } });
      });

      it('cuts the output at the cap', async () => {
        const answer = await post('/mcp/tools/call', executor, {
          name: 'python_execute',
          arguments: { code: 'print("x" * 100000)' },
        });
        expect(answer.body).toMatchObject({ isError: true, structuredContent: { truncated: true } });
        expect(answer.body.structuredContent.stdout.length).toBeLessThanOrEqual(1000);
      });
    });
  });

  describe('resources', () => {
    it('lists status, performance and the docs guides with their MIME types, and reads them', async () => {
      const list = await post('/mcp/resources/list', reader);
      expect(list.body.resources).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ uri: 'toolbox://status', mimeType: 'application/json' }),
          expect.objectContaining({ uri: 'toolbox://performance', mimeType: 'application/json' }),
          expect.objectContaining({ uri: 'toolbox://docs/guides', mimeType: 'text/markdown' }),
        ]),
      );
      const status = await post('/mcp/resources/read', reader, { uri: 'toolbox://status' });
      expect(JSON.parse(status.body.contents[0].text)).toMatchObject({ server: 'toolbox-mcp' });
      const guides = await post('/mcp/resources/read', reader, { uri: 'toolbox://docs/guides' });
      expect(guides.body.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    });

    it('refuses resources/list to a key without read, naming the permission (as resources/read)', async () => {
      const executeOnly = await mcp.key('execute-only-rest', ['execute']);
      const list = await post('/mcp/resources/list', executeOnly);
      expect([list.status, list.body.code]).toEqual([403, 'FORBIDDEN']);
      expect(list.body.message).toContain('Permission "read" required');
      const read = await post('/mcp/resources/read', executeOnly, { uri: 'toolbox://status' });
      expect([read.status, read.body.code]).toEqual([403, 'FORBIDDEN']);
    });

    it('answers 404 for an unknown uri, 400 without one', async () => {
      const answer = await post('/mcp/resources/read', reader, { uri: 'toolbox://nothing' });
      expect([answer.status, answer.body.code]).toEqual([404, 'NOT_FOUND']);
      expect((await post('/mcp/resources/read', reader, {})).status).toBe(400);
    });
  });

  describe('key management', () => {
    it('creates a key shown once (201), stores only its hash, and lists it without the key', async () => {
      const created = await post('/api/keys', admin, { name: 'cursor', permissions: ['read', 'execute'] });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        api_key: expect.stringMatching(/^tb_mcp_[0-9a-f]{32}$/),
        name: 'cursor',
        permissions: ['read', 'execute'],
        warning: expect.stringContaining('shown once'),
      });
      const listed = await call('GET', '/api/keys', admin);
      expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key);
      expect(listed.body.keys.find((key: { name: string }) => key.name === 'cursor')).toMatchObject({
        permissions: ['read', 'execute'],
        key_prefix: created.body.api_key.slice(0, 15),
      });
      const rows = await mcp.app.get(DataSource).query('SELECT key_hash FROM mcp_api_keys WHERE name = ?', ['cursor']);
      expect(rows).toEqual([{ key_hash: hashMcpKey(created.body.api_key) }]);
      const dump = JSON.stringify(await mcp.app.get(DataSource).query('SELECT * FROM mcp_api_keys'));
      expect(dump).not.toContain(created.body.api_key);
    });

    it('defaults permissions to read, refuses unknown permissions (400) and duplicate names (409)', async () => {
      const created = await post('/api/keys', admin, { name: 'default-read' });
      expect(created.body.permissions).toEqual(['read']);
      const bad = await post('/api/keys', admin, { name: 'bad', permissions: ['read', 'root'] });
      expect([bad.status, bad.body.code]).toEqual([400, 'BAD_REQUEST']);
      const duplicate = await post('/api/keys', admin, { name: 'default-read' });
      expect([duplicate.status, duplicate.body.code]).toEqual([409, 'CONFLICT']);
    });

    it('needs admin to manage keys', async () => {
      expect((await call('GET', '/api/keys', writer)).status).toBe(403);
      expect((await post('/api/keys', executor, { name: 'x' })).status).toBe(403);
      expect((await call('DELETE', '/api/keys/reader', reader)).status).toBe(403);
    });

    it('revokes a key (it is 401 afterwards) and answers 404 for an unknown name', async () => {
      const { body } = await post('/api/keys', admin, { name: 'short-lived' });
      expect((await post('/mcp/tools/list', body.api_key)).status).toBe(200);
      expect((await call('DELETE', '/api/keys/short-lived', admin)).status).toBe(200);
      expect((await post('/mcp/tools/list', body.api_key)).status).toBe(401);
      expect((await call('DELETE', '/api/keys/short-lived', admin)).status).toBe(404);
    });

    it('records usage without a write per request', async () => {
      const { body } = await post('/api/keys', admin, { name: 'counted' });
      for (let i = 0; i < 3; i++) await post('/mcp/tools/list', body.api_key);
      const listed = await call('GET', '/api/keys', admin);
      expect(listed.body.keys.find((key: { name: string }) => key.name === 'counted')).toMatchObject({
        usage_count: 3,
        last_used_at: expect.any(String),
      });
    });
  });

  describe('tb mcp keys', () => {
    const tb = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const io: CommandIo = {
        out: (text) => out.push(text),
        err: (text) => err.push(text),
        env: { ...process.env, ...envOf(mcp) } as Record<string, string>,
      };
      const code = await runMcpCommand(argv, io);
      return { code, stdout: out.join('\n'), stderr: err.join('\n') };
    };

    it('creates, lists and revokes keys from the command line', async () => {
      const created = await tb(['keys', 'create', 'cli-key', '--permissions', 'read,execute']);
      expect(created.code).toBe(0);
      const key = /tb_mcp_[0-9a-f]{32}/.exec(created.stdout)![0];
      expect((await post('/mcp/tools/list', key)).status).toBe(200);
      expect((await tb(['keys', 'list'])).stdout).toMatch(/cli-key\s+tb_mcp_[0-9a-f]{8}…\s+read,execute/);
      expect((await tb(['keys', 'create', 'cli-bad', '--permissions', 'read,sudo'])).code).toBe(1);
      expect((await tb(['keys', 'revoke', 'cli-key'])).code).toBe(0);
      expect((await post('/mcp/tools/list', key)).status).toBe(401);
      expect((await tb(['keys', 'revoke', 'cli-key'])).code).toBe(1);
    });
  });

  describe('OpenAPI', () => {
    it('documents every route with typed responses', async () => {
      const { status, body } = await call('GET', '/api/docs-json');
      expect(status).toBe(200);
      const paths = body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
      for (const [path, method, code] of [
        ['/mcp/initialize', 'post', '200'],
        ['/mcp/tools/list', 'post', '200'],
        ['/mcp/tools/call', 'post', '200'],
        ['/mcp/resources/list', 'post', '200'],
        ['/mcp/resources/read', 'post', '200'],
        ['/health', 'get', '200'],
        ['/status', 'get', '200'],
        ['/api/keys', 'get', '200'],
        ['/api/keys', 'post', '201'],
        ['/api/keys/{name}', 'delete', '200'],
        ['/mcp', 'post', '200'],
        ['/mcp', 'get', '200'],
        ['/mcp', 'delete', '200'],
      ])
        expect(paths[path]?.[method]?.responses?.[code]).toBeDefined();
      expect(JSON.stringify(paths['/mcp/tools/call'].post.responses['200'])).toContain('ToolCallResultDto');
    });
  });

  describe('DNS-rebinding protection and CORS', () => {
    it('refuses a foreign Origin and a foreign Host while bound to localhost (403)', async () => {
      const foreignOrigin = await post('/mcp/tools/list', reader, {}, { origin: 'http://evil.example' });
      expect(foreignOrigin.status).toBe(403);
      const local = await post('/mcp/tools/list', reader, {}, { origin: 'http://localhost:6274' });
      expect(local.status).toBe(200);
      const status = await new Promise<number>((resolve, reject) => {
        const url = new URL(mcp.baseUrl);
        const request = httpRequest(
          { host: url.hostname, port: url.port, path: '/health', headers: { host: 'evil.example:8765' } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end();
      });
      expect(status).toBe(403);
    });

    it('answers a preflight allowing the MCP headers and exposing Mcp-Session-Id', async () => {
      const answer = await call('OPTIONS', '/mcp', undefined, undefined, {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,x-api-key,mcp-protocol-version',
      });
      expect(answer.status).toBeLessThan(300);
      expect(answer.headers.get('access-control-allow-headers')).toMatch(/MCP-Protocol-Version/i);
      expect(answer.headers.get('access-control-allow-headers')).toMatch(/X-API-Key/i);
      const actual = await post('/mcp/tools/list', reader, {}, { origin: 'http://localhost:6274' });
      expect(actual.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/i);
    });

    it('refuses Origin null with 403, even with a valid key', async () => {
      const answer = await post('/mcp/tools/list', reader, {}, { origin: 'null' });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('Origin null') });
    });

    it('answers an allowed origin with that origin, never * and never with credentials', async () => {
      const answer = await post('/mcp/tools/list', reader, {}, { origin: 'http://localhost:6274' });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
      expect(answer.headers.get('vary')).toMatch(/Origin/i);
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it("refuses a foreign origin's preflight with 403 and no Access-Control-Allow-Origin", async () => {
      const answer = await call('OPTIONS', '/mcp/tools/call', undefined, undefined, {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: 'FORBIDDEN' });
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});

/** A request to a running MCP server with a browser's `Origin` (no key unless given). */
async function fromOrigin(mcp: McpUnderTest, path: string, origin: string, body: unknown, headers = {}) {
  const response = await fetch(`${mcp.baseUrl}${path}`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

const ECHO_CALL = { name: 'limits_echo', arguments: { text: 'hi' } };

// `tb mcp --no-auth`: no key stands between a web page and the tools, so its Origin decides alone.
describe.each(backends())('MCP transport with --no-auth on $name', (backend) => {
  let mcp: McpUnderTest;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, {}, { noAuth: true });
  });

  afterAll(async () => {
    await mcp?.close();
  });

  it('lets a page on a loopback origin call a tool without a key', async () => {
    const answer = await fromOrigin(mcp, '/mcp/tools/call', 'http://localhost:6274', ECHO_CALL);
    expect(answer.status).toBe(200);
    expect(answer.body.isError).toBe(false);
  });

  it('refuses a tool call from Origin null (a sandboxed iframe) with 403', async () => {
    const answer = await fromOrigin(mcp, '/mcp/tools/call', 'null', ECHO_CALL);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('Origin null') });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a JSON-RPC tools/call on /mcp from Origin null with 403', async () => {
    const answer = await fromOrigin(
      mcp,
      '/mcp',
      'null',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ECHO_CALL },
      { accept: 'application/json, text/event-stream' },
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('refuses a tool call from a foreign origin with 403', async () => {
    const answer = await fromOrigin(mcp, '/mcp/tools/call', 'https://evil.example', ECHO_CALL);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('evil.example') });
  });

  it('refuses to start with MCP_CORS_ORIGINS=* (every page could call tools)', async () => {
    const io: CommandIo = {
      out: () => undefined,
      err: () => undefined,
      env: { ...process.env, ...envOf(mcp), MCP_CORS_ORIGINS: '*' } as Record<string, string>,
    };
    await expect(runMcpCommand(['--no-auth', '--port', '0'], io)).rejects.toThrow(
      /--no-auth cannot be combined with MCP_CORS_ORIGINS=\*/,
    );
  });
});

// Bound to every interface the Host check is off (any name may reach it), the Origin rule still holds.
describe.each(backends())('MCP transport bound to every interface on $name', (backend) => {
  let mcp: McpUnderTest;
  let key: string;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, { MCP_HOST: '0.0.0.0', MCP_CORS_ORIGINS: 'https://app.example' });
    key = await mcp.key('reader', ['read']);
  });

  afterAll(async () => {
    await mcp?.close();
  });

  it('refuses a foreign origin with 403, even with a valid key', async () => {
    const answer = await fromOrigin(mcp, '/mcp/tools/list', 'https://evil.example', {}, { 'x-api-key': key });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('evil.example') });
  });

  it('answers a listed origin with that origin', async () => {
    const answer = await fromOrigin(mcp, '/mcp/tools/list', 'https://app.example', {}, { 'x-api-key': key });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('serves a client that sends no Origin (an MCP client, curl)', async () => {
    const response = await fetch(`${mcp.baseUrl}/mcp/tools/list`, { method: 'POST', headers: { 'x-api-key': key } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
  });
});

describe.each(backends())('MCP sessions cap on $name', (backend) => {
  let mcp: McpUnderTest;
  let key: string;
  const initialize = async () =>
    (
      await fetch(`${mcp.baseUrl}/mcp/initialize`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json() as Promise<{ session_id: string }>;
  const list = async (session: string) =>
    (
      await fetch(`${mcp.baseUrl}/mcp/tools/list`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'mcp-session-id': session },
      })
    ).status;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, { MCP_MAX_SESSIONS: '2' });
    key = await mcp.key('capped', ['read']);
  });

  afterAll(async () => {
    await mcp?.close();
  });

  it('drops the least recently active session past the cap', async () => {
    const first = await initialize();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await initialize();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const third = await initialize();
    expect(await list(first.session_id)).toBe(404);
    expect(await list(second.session_id)).toBe(200);
    expect(await list(third.session_id)).toBe(200);
    const status = await fetch(`${mcp.baseUrl}/status`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await status.json()) as { sessions: number }).sessions).toBe(2);
  });
});

/** The environment that points a `tb` command at the server's own stores. */
function envOf(mcp: McpUnderTest): Record<string, string> {
  const env: Record<string, string> = { DATA_DIR: mcp.workspace, MODS_DIR: mcp.modsDir, APP_ID: 'mcp-e2e' };
  if (mcp.config.database.type === 'mysql') env.DATABASE_URL = mcp.config.database.location;
  if (mcp.config.redisUrl) env.REDIS_URL = mcp.config.redisUrl;
  env.REDIS_PREFIX = mcp.config.redisPrefix;
  return env;
}
