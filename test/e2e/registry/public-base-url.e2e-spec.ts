import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';

const PUBLIC = 'https://registry.example.test/tb';

/** Behind a proxy every link a response carries starts with PUBLIC_BASE_URL (one helper: @RequestBaseUrl()). */
describe.each(backends())('links behind a proxy on $name', (backend) => {
  let registry: RegistryUnderTest;
  let client: ApiClient;
  let name: string;

  beforeAll(async () => {
    registry = await startRegistry(backend, { PUBLIC_BASE_URL: `${PUBLIC}/` });
    const publisher = await publisherFactory(registry);
    client = publisher.client;
    name = `Proxied-${publisher.publisherName}`;
    await createPackage(client, name);
    expect((await uploadVersion(client, name, '1.0.0')).status).toBe(201);
    expect((await uploadVersion(client, name, '1.1.0')).status).toBe(201);
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('signs download tickets under PUBLIC_BASE_URL', async () => {
    const ticket = await registry.api.get(`/api/v1/packages/${name}/versions/1.0.0/download`);
    expect(ticket.status).toBe(200);
    expect(ticket.body.url).toMatch(new RegExp(`^${PUBLIC}/api/v1/files/`));
  });

  it('links version details under PUBLIC_BASE_URL', async () => {
    const detail = await registry.api.get(`/api/v1/packages/${name}/versions/1.1.0`, { Accept: 'application/json' });
    expect(detail.status).toBe(200);
    expect(detail.body.download_url).toMatch(new RegExp(`^${PUBLIC}/api/v1/files/`));
  });

  it('links resolved versions under PUBLIC_BASE_URL', async () => {
    const resolved = await registry.api.post('/api/v1/resolve', { requirements: [`${name}>=1.0.0`] });
    expect(resolved.status).toBe(200);
    expect(resolved.body.resolved[name].download_url).toMatch(new RegExp(`^${PUBLIC}/api/v1/files/`));
  });

  it('links diffs under PUBLIC_BASE_URL', async () => {
    const diff = await registry.api.get(`/api/v1/packages/${name}/diff/1.0.0/1.1.0`);
    expect([200, 202]).toContain(diff.status);
    const link: string = diff.status === 200 ? diff.body.download_url : diff.body.info_url;
    expect(link).toMatch(new RegExp(`^${PUBLIC}/api/v1/packages/${name}/diff/1\\.0\\.0/1\\.1\\.0`));
  });
});
