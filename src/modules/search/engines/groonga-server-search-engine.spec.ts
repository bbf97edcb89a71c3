import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GroongaServerSearchEngine, weighsPrefixSearches } from './groonga-server-search-engine.js';

/** The dedicated engine's own checks; its ranking runs in the engine contract spec against a real server. */
describe('GroongaServerSearchEngine', () => {
  it('weighs prefix searches on Groonga 13 and later only, branching on older or unknown versions', () => {
    expect(weighsPrefixSearches('13.0.0')).toBe(true);
    expect(weighsPrefixSearches('14.1.2')).toBe(true);
    expect(weighsPrefixSearches('7.0.7')).toBe(false);
    expect(weighsPrefixSearches('?')).toBe(false);
    expect(weighsPrefixSearches('')).toBe(false);
  });

  it('refuses an address that is not an http(s) URL', async () => {
    await expect(GroongaServerSearchEngine.connect('localhost:10041')).rejects.toThrow(/not a URL|must be http/);
    await expect(GroongaServerSearchEngine.connect('ftp://127.0.0.1:10041')).rejects.toThrow(
      'SEARCH_GROONGA_URL must be http:// or https://',
    );
  });

  it('fails naming the address when nothing answers there', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    await expect(GroongaServerSearchEngine.connect(`http://127.0.0.1:${port}`)).rejects.toThrow(
      `Groonga server http://127.0.0.1:${port} unreachable`,
    );
  });

  it("fails with the server's answer when it is not Groonga or Groonga refuses", async () => {
    const server = createServer((request, response) => {
      if (request.url?.startsWith('/d/status')) response.end('<html>not groonga</html>');
      else response.end('[[-22,0,0,"invalid"],[]]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(GroongaServerSearchEngine.connect(`http://127.0.0.1:${port}`)).rejects.toThrow(
        /answered 200 without JSON: <html>not groonga/,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
