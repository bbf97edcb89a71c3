import { corsOriginRule } from './cors-origins.js';

describe('corsOriginRule', () => {
  it('allows Tauri, any-port localhost and 127.0.0.1, and the configured origins only', () => {
    const allowed = corsOriginRule(['https://app.example.com']);
    for (const origin of [
      'tauri://localhost',
      'http://tauri.localhost',
      'https://tauri.localhost',
      'http://localhost',
      'http://localhost:3000',
      'https://127.0.0.1:65535',
      'https://APP.example.com',
    ])
      expect({ origin, allowed: allowed(origin) }).toEqual({ origin, allowed: true });
    for (const origin of [
      'https://example.com',
      'http://localhost.example.com',
      'http://127.0.0.1.evil.test',
      'http://localhost:3000/path',
      'ftp://localhost',
      'https://app.example.com.evil.test',
      'null',
    ])
      expect({ origin, allowed: allowed(origin) }).toEqual({ origin, allowed: false });
  });

  it('reflects every origin with *', () => {
    expect(corsOriginRule(['*'])('https://anything.test')).toBe(true);
  });
});
