import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeHfHub } from '../../fixtures/fake-hf-hub.js';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** Model hub import (search, download with progress, size limit, SHA-256 check) and GGUF upload. */

const GGUF = Buffer.concat([Buffer.from('GGUF'), randomBytes(4096)]);

async function ndjson(response: Response): Promise<Array<Record<string, unknown>>> {
  return (await response.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(backends())('gateway model hub import ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let hub: FakeHfHub;

  beforeAll(async () => {
    hub = new FakeHfHub({
      'acme/Tiny-GGUF': [{ path: 'tiny.Q4_K_M.gguf', content: GGUF }],
      'acme/private-GGUF': [{ path: 'secret.Q8_0.gguf', content: GGUF }],
      'acme/Broken-GGUF': [{ path: 'broken.Q4_0.gguf', content: GGUF, wrongSha256: true }],
      'acme/Huge-GGUF': [{ path: 'huge.F16.gguf', content: Buffer.alloc(64 * 1024) }],
      'acme/down-GGUF': [{ path: 'down.Q4_0.gguf', content: GGUF }],
    });
    await hub.start();
    gateway = await startGateway(backend, {
      env: { HF_BASE_URL: hub.url, GATEWAY_HUB_MAX_BYTES: String(32 * 1024) },
      settings: { hf_token: 'hf_test_token' },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await hub?.stop();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('searches the hub and lists a repository’s GGUF files with their SHA-256', async () => {
    const search = await gateway.call<{ models: Array<{ id: string }> }>('GET', '/admin/api/models/search-hf?q=tiny');
    expect(search.body.models.map((model) => model.id)).toEqual(['acme/Tiny-GGUF']);
    const files = await gateway.call<{ files: unknown[] }>('GET', '/admin/api/models/hf-files?repo=acme/Tiny-GGUF');
    expect(files.body.files).toEqual([
      { path: 'tiny.Q4_K_M.gguf', size: GGUF.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });

  it('downloads with progress, verifies, imports into the runtime and serves the model', async () => {
    const response = await post('/admin/api/models/download-hf', { repo: 'acme/Tiny-GGUF', file: 'tiny.Q4_K_M.gguf' });
    expect(response.status).toBe(200);
    const lines = await ndjson(response);
    expect(lines[0]).toMatchObject({ status: 'downloading acme/Tiny-GGUF/tiny.Q4_K_M.gguf', percent: 0 });
    expect(lines.some((line) => line.status === 'verified sha256')).toBe(true);
    expect(lines[lines.length - 1]).toMatchObject({ status: 'success' });
    expect(gateway.ollama.lastRequest('/api/blobs')).toMatchObject({ size: GGUF.length });
    expect(gateway.ollama.lastRequest('/api/create')).toMatchObject({ model: 'tiny-gguf:q4_k_m' });
    const model = await gateway.openai().models.retrieve('tiny-gguf:q4_k_m');
    expect(model.id).toBe('tiny-gguf:q4_k_m');
    expect(await readdir(join(gateway.dataDir, 'gateway', 'downloads'))).toEqual([]);
  });

  it('sends the hub token for private repositories', async () => {
    const response = await post('/admin/api/models/download-hf', {
      repo: 'acme/private-GGUF',
      file: 'secret.Q8_0.gguf',
      name: 'secret:q8',
    });
    expect((await ndjson(response)).at(-1)).toMatchObject({ status: 'success' });
    expect(hub.seenAuthorization.at(-1)).toBe('Bearer hf_test_token');
  });

  it('refuses a file over the size limit before downloading it', async () => {
    const response = await post('/admin/api/models/download-hf', { repo: 'acme/Huge-GGUF', file: 'huge.F16.gguf' });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'GATEWAY_HUB_MAX_BYTES',
    );
  });

  it('refuses a download whose SHA-256 differs from the hub’s, importing nothing', async () => {
    const before = gateway.ollama.requests.filter((request) => request.path === '/api/create').length;
    const lines = await ndjson(
      await post('/admin/api/models/download-hf', { repo: 'acme/Broken-GGUF', file: 'broken.Q4_0.gguf' }),
    );
    expect(String(lines.at(-1)?.error)).toContain('failed the SHA-256 check');
    expect(gateway.ollama.requests.filter((request) => request.path === '/api/create').length).toBe(before);
    expect(await readdir(join(gateway.dataDir, 'gateway', 'downloads'))).toEqual([]);
  });

  it('answers 404 for a file the repository does not have and 400 for a bad repo name', async () => {
    expect((await post('/admin/api/models/download-hf', { repo: 'acme/Tiny-GGUF', file: 'nope.gguf' })).status).toBe(
      404,
    );
    expect((await post('/admin/api/models/download-hf', { repo: '../etc', file: 'x.gguf' })).status).toBe(400);
  });

  it('answers 502 (a bad upstream answer, not 503) when the hub answers with an error of its own', async () => {
    const failing = await gateway.call<{ error: { message: string } }>(
      'GET',
      '/admin/api/models/hf-files?repo=acme/down-GGUF',
    );
    expect(failing.status).toBe(502);
    expect(JSON.stringify(failing.body)).toContain('answered 500');
  });

  it('imports an uploaded GGUF file', async () => {
    const form = new FormData();
    form.append('name', 'uploaded:v1');
    form.append('file', new Blob([GGUF]), 'local.gguf');
    const response = await fetch(`${gateway.baseUrl}/admin/api/models/import-gguf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminKey}` },
      body: form,
    });
    expect(response.status).toBe(200);
    expect((await ndjson(response)).at(-1)).toMatchObject({ status: 'success' });
    expect((await gateway.openai().models.retrieve('uploaded:v1')).id).toBe('uploaded:v1');
  });
});
