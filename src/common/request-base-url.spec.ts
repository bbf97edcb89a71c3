import { publicBaseUrl, requestOrigin } from './request-base-url.js';

const request = (protocol: string, host: string) =>
  ({ protocol, get: (name: string) => (name.toLowerCase() === 'host' ? host : undefined) }) as never;

describe('request base URL', () => {
  it('is the origin the request was sent to', () => {
    expect(requestOrigin(request('http', '127.0.0.1:4025'))).toBe('http://127.0.0.1:4025');
  });

  it('is PUBLIC_BASE_URL when one is configured', () => {
    expect(publicBaseUrl(request('http', '10.0.0.5:4025'), 'https://registry.example.org')).toBe(
      'https://registry.example.org',
    );
  });

  it('falls back to the request origin without PUBLIC_BASE_URL', () => {
    expect(publicBaseUrl(request('https', 'tb.example'), null)).toBe('https://tb.example');
  });
});
