import { corsOriginRule } from '../http-worker/index.js';
import { websocketOriginRule } from './ws-origin.js';

describe('WebSocket origin rule', () => {
  const allowed = websocketOriginRule(corsOriginRule(['https://app.example.com']));

  it.each([
    ['no Origin (a script or an app)', undefined, 'worker.example:8100', true],
    ['an any-port localhost page', 'http://localhost:5173', 'worker.example:8100', true],
    ['a 127.0.0.1 page', 'https://127.0.0.1', 'worker.example:8100', true],
    ['the Tauri app', 'tauri://localhost', 'worker.example:8100', true],
    ['a CORS_ORIGINS origin', 'https://app.example.com', 'worker.example:8100', true],
    ['the page behind the same proxy', 'https://toolbox.example', 'toolbox.example', true],
    ['the page on the same host and port', 'http://toolbox.example:8080', 'toolbox.example:8080', true],
    ['the page with an upper-case host', 'https://Toolbox.Example', 'TOOLBOX.example', true],
    ['a foreign site', 'https://evil.example', 'toolbox.example', false],
    ['the same host on another port', 'http://toolbox.example:9999', 'toolbox.example:8080', false],
    ['a look-alike subdomain', 'https://toolbox.example.evil.example', 'toolbox.example', false],
    ['a sandboxed iframe (null)', 'null', 'toolbox.example', false],
    ['a foreign page without Host', 'https://evil.example', undefined, false],
    ['a file page', 'file://', 'toolbox.example', false],
  ])('answers %s with %s', (_case, origin, host, expected) => {
    expect(allowed(origin, host)).toBe(expected);
  });

  it('takes CORS_ORIGINS=* as every origin, as the HTTP workers do', () => {
    expect(websocketOriginRule(corsOriginRule(['*']))('https://anything.example', 'toolbox.example')).toBe(true);
  });
});
