import { callerFor, mayUseTool, permissionForTool, presentedKey, toolNameFor } from './mcp-permissions.js';

describe('MCP permission rules', () => {
  it('needs execute for python…, write for docs_writer…, admin for admin…, read otherwise (by prefix)', () => {
    expect(permissionForTool('python_execute')).toBe('execute');
    expect(permissionForTool('docs_writer')).toBe('write');
    expect(permissionForTool('admin_keys')).toBe('admin');
    expect(permissionForTool('toolbox_execute')).toBe('read');
    // The original matched "contains": these are plain read tools here.
    expect(permissionForTool('run_python_docs')).toBe('read');
    expect(permissionForTool('my_admin_report')).toBe('read');
  });

  it('lets admin imply the other permissions', () => {
    const admin = { keyName: 'a', permissions: ['admin' as const] };
    for (const name of ['python_execute', 'docs_writer', 'admin_x', 'core_ping'])
      expect(mayUseTool(admin, { name })).toBe(true);
  });

  it("applies an app-core function's own level: level -1 is an admin tool", () => {
    const reader = { keyName: 'r', permissions: ['read' as const] };
    expect(mayUseTool(reader, { name: 'limits_report', level: -1 })).toBe(false);
    expect(mayUseTool(reader, { name: 'limits_report', level: 1 })).toBe(true);
    expect(mayUseTool(reader, { name: 'limits_report', level: 2 })).toBe(false);
    expect(mayUseTool({ keyName: 'a', permissions: ['admin'] }, { name: 'limits_report', level: -1 })).toBe(true);
  });

  it('maps keys to app-core callers over the mcp transport', () => {
    expect(callerFor({ keyName: 'a', permissions: ['admin'] })).toEqual({
      level: -1,
      userId: 'mcp:a',
      transport: 'mcp',
    });
    expect(callerFor({ keyName: 'r', permissions: ['read', 'execute'] })).toEqual({
      level: 1,
      userId: 'mcp:r',
      transport: 'mcp',
    });
  });

  it("sanitises tool names to MCP's character set", () => {
    expect(toolNameFor('hello', 'greet')).toBe('hello_greet');
    expect(toolNameFor('my mod', 'run/now!')).toBe('my_mod_run_now_');
    expect(toolNameFor('m', 'f'.repeat(200))).toHaveLength(128);
  });

  it('takes the key from X-API-Key or a bearer Authorization header', () => {
    expect(presentedKey({ 'x-api-key': ' k1 ' })).toBe('k1');
    expect(presentedKey({ authorization: 'Bearer k2' })).toBe('k2');
    expect(presentedKey({ authorization: 'Basic k3' })).toBeUndefined();
    expect(presentedKey({})).toBeUndefined();
  });
});
