import { isLoopbackHost, mcpOriginRule } from './mcp-origins.js';

describe('MCP origin rule', () => {
  const defaults = mcpOriginRule([]);

  it.each([
    ['http://localhost:6274', true],
    ['http://127.0.0.1', true],
    ['https://localhost:8443', true],
    ['http://[::1]:3000', true],
    ['HTTP://LOCALHOST:6274', true],
    ['http://evil.example', false],
    ['http://localhost.evil.example', false],
    ['http://127.0.0.1.nip.io', false],
    ['file://localhost', false],
    ['chrome-extension://abcdef', false],
    ['http://localhost:6274/path', false],
    ['null', false],
    ['', false],
  ])('answers %s with %s when nothing is configured', (origin, allowed) => {
    expect(defaults(origin)).toBe(allowed);
  });

  it('allows the listed origins, case-insensitively, and no others', () => {
    const rule = mcpOriginRule(['https://app.example.com']);
    expect(rule('https://app.example.com')).toBe(true);
    expect(rule('https://APP.example.com')).toBe(true);
    expect(rule('https://app.example.com:8443')).toBe(false);
    expect(rule('http://app.example.com')).toBe(false);
  });

  it('never allows the null origin, not even with * or null listed', () => {
    expect(mcpOriginRule(['*'])('null')).toBe(false);
    expect(mcpOriginRule(['null'])('null')).toBe(false);
    expect(mcpOriginRule(['*'])(' NULL ')).toBe(false);
  });

  it('allows every other origin with *', () => {
    expect(mcpOriginRule(['*'])('https://anything.example')).toBe(true);
  });

  it('knows the loopback names', () => {
    for (const host of ['localhost', '127.0.0.1', '::1', '[::1]', 'LocalHost']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['127.0.0.2', 'localhost.example', '0.0.0.0']) expect(isLoopbackHost(host)).toBe(false);
  });
});
