import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import {
  ADMIN,
  createPackage,
  publisherFactory,
  samplePackageZip,
  uploadVersion,
} from '../../support/registry-fixtures.js';

describe.each(backends())('packages on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend);
  });

  afterAll(async () => {
    await registry?.close();
  });

  describe('create', () => {
    it('creates a package from JSON and returns the package view', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      const response = await client.post('/api/v1/packages', {
        name: 'CloudM',
        display_name: 'Cloud M',
        description: 'Cloud module',
        package_type: 'mod',
        keywords: ['cloud'],
        license: 'MIT',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        name: 'CloudM',
        display_name: 'Cloud M',
        package_type: 'mod',
        visibility: 'public',
        latest_version: null,
        total_downloads: 0,
        downloads: 0,
        keywords: ['cloud'],
        license: 'MIT',
        publisher: { name: publisherName, verified: false },
        versions: [],
      });
      expect(response.body.created_at).toMatch(/Z$/);
    });

    it('looks names up case-insensitively and displays them as created', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'MixedCase.Name');
      const response = await registry.api.get('/api/v1/packages/mixedcase.name');
      expect(response.status).toBe(200);
      expect(response.body.name).toBe('MixedCase.Name');
    });

    it('refuses a name that differs only in case with 409', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'UniqueOne');
      const response = await client.post('/api/v1/packages', { name: 'uniqueone' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('CONFLICT');
    });

    it.each([
      ['', 'empty'],
      ['-leading', 'leading dash'],
      ['has space', 'space'],
      ['a'.repeat(101), 'too long'],
      ['bad/slash', 'slash'],
    ])('rejects the invalid name %j (%s) with 422', async (name) => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/packages', { name });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('UNPROCESSABLE_ENTITY');
      expect(response.body.errors[0].field).toBe('name');
    });

    it('rejects an unknown package_type with 422', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/packages', { name: 'typed', package_type: 'spaceship' });
      expect(response.status).toBe(422);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain('package_type');
    });

    it('requires a publisher (403)', async () => {
      const response = await registry
        .as({ id: 'no-publisher', username: 'nopub' })
        .post('/api/v1/packages', { name: 'orphan' });
      expect(response.status).toBe(403);
      expect(response.body.detail).toMatch(/publisher/i);
    });

    it('requires authentication (401)', async () => {
      const response = await registry.api.post('/api/v1/packages', { name: 'anon' });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('UNAUTHORIZED');
    });

    it('creates a package with its first version from multipart metadata and file', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.postForm('/api/v1/packages', {
        metadata: JSON.stringify({ name: 'WithFile', description: 'first', version: '0.1.0', changelog: 'initial' }),
        file: { filename: 'with-file.zip', content: samplePackageZip() },
      });
      expect(response.status).toBe(201);
      expect(response.body.latest_version).toBe('0.1.0');
      expect(response.body.versions[0]).toMatchObject({ version: '0.1.0', changelog: 'initial', yanked: false });
    });

    it('creates nothing when the multipart first version is rejected', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.postForm('/api/v1/packages', {
        metadata: JSON.stringify({ name: 'BadFirst', version: '0.1.0' }),
        file: { filename: 'bad.zip', content: Buffer.from('not a zip at all') },
      });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('ZIP_REJECTED');
      expect((await registry.api.get('/api/v1/packages/BadFirst')).status).toBe(404);
    });

    it('rejects multipart metadata that is not JSON with 422', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.postForm('/api/v1/packages', { metadata: '{not json' });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('metadata');
    });
  });

  describe('list', () => {
    it('pages with a total of all matching packages, most recently updated first', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      for (const name of ['ListA', 'ListB', 'ListC']) await createPackage(client, name);
      const first = await registry.api.get(`/api/v1/packages?publisher=${publisherName}&per_page=2&page=1`);
      expect(first.status).toBe(200);
      expect(first.body.total).toBe(3);
      expect(first.body.per_page).toBe(2);
      expect(first.body.packages.map((p: { name: string }) => p.name)).toEqual(['ListC', 'ListB']);
      const second = await registry.api.get(`/api/v1/packages?publisher=${publisherName}&per_page=2&page=2`);
      expect(second.body.packages.map((p: { name: string }) => p.name)).toEqual(['ListA']);
    });

    it('filters by package_type', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      await createPackage(client, 'ThemeOne', { package_type: 'theme' });
      await createPackage(client, 'LibOne', { package_type: 'library' });
      const response = await registry.api.get(`/api/v1/packages?publisher=${publisherName}&package_type=theme`);
      expect(response.body.packages.map((p: { name: string }) => p.name)).toEqual(['ThemeOne']);
      expect(response.body.total).toBe(1);
    });

    it.each(['0', '101', 'abc'])('rejects per_page=%s with 400', async (perPage) => {
      const response = await registry.api.get(`/api/v1/packages?per_page=${perPage}`);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
    });

    it("never lists others' unlisted or private packages", async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'HiddenPriv', { visibility: 'private' });
      await createPackage(owner.client, 'HiddenUnl', { visibility: 'unlisted' });
      const other = await publisherFactory(registry);
      const names = async (client: typeof registry.api) =>
        (await client.get(`/api/v1/packages?publisher=${owner.publisherName}`)).body.packages.map(
          (p: { name: string }) => p.name,
        );
      expect(await names(registry.api)).toEqual([]);
      expect(await names(other.client)).toEqual([]);
      expect(await names(owner.client)).toEqual(expect.arrayContaining(['HiddenPriv', 'HiddenUnl']));
    });
  });

  describe('visibility', () => {
    it('lets any authenticated user read an unlisted package, not anonymous callers', async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'UnlistedPkg', { visibility: 'unlisted' });
      expect((await registry.api.get('/api/v1/packages/UnlistedPkg')).status).toBe(404);
      const stranger = registry.as({ id: 'stranger', username: 'stranger' });
      expect((await stranger.get('/api/v1/packages/UnlistedPkg')).status).toBe(200);
    });

    it("answers 404 for another publisher's private package so its existence does not leak", async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'PrivatePkg', { visibility: 'private' });
      const other = await publisherFactory(registry);
      const response = await other.client.get('/api/v1/packages/PrivatePkg');
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
      expect((await owner.client.get('/api/v1/packages/PrivatePkg')).status).toBe(200);
    });
  });

  describe('detail', () => {
    it('answers a repeated read (from the detail cache) with the same JSON, headers and view for every caller', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'CachedDetail', { description: 'ünïcode "quoted"' });
      const first = await registry.api.get('/api/v1/packages/CachedDetail');
      const again = await registry.api.get('/api/v1/packages/cacheddetail');
      const signedIn = await registry
        .as({ id: 'detail-reader', username: 'detail-reader' })
        .get('/api/v1/packages/CachedDetail');
      for (const response of [first, again, signedIn]) {
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.headers.get('content-length')).toBe(String(first.bytes.length));
        expect(response.bytes.equals(first.bytes)).toBe(true);
      }
      expect(first.body).toMatchObject({ name: 'CachedDetail', description: 'ünïcode "quoted"', versions: [] });
    });

    it('still answers 404 to a stranger for a private package the owner has read before', async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'PrivateRead', { visibility: 'private' });
      expect((await owner.client.get('/api/v1/packages/PrivateRead')).status).toBe(200);
      const response = await registry.api.get('/api/v1/packages/PrivateRead');
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    });
  });

  describe('update', () => {
    it('lets the owner change fields and visibility', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'Patchable');
      const response = await client.patch('/api/v1/packages/Patchable', {
        description: 'new words',
        visibility: 'private',
        keywords: ['x'],
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ description: 'new words', visibility: 'private', keywords: ['x'] });
      expect((await registry.api.get('/api/v1/packages/Patchable')).status).toBe(404);
    });

    it("refuses another publisher's change with 403", async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'NotYours');
      const other = await publisherFactory(registry);
      const response = await other.client.patch('/api/v1/packages/NotYours', { description: 'mine now' });
      expect(response.status).toBe(403);
      expect((await registry.api.get('/api/v1/packages/NotYours')).body.description).toBe('The NotYours package');
    });

    it('lets an admin change any package', async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'AdminPatched');
      const response = await registry.as(ADMIN).patch('/api/v1/packages/AdminPatched', { description: 'by admin' });
      expect(response.status).toBe(200);
      expect(response.body.description).toBe('by admin');
    });

    it('rejects fields that are not updatable with 422', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'NoRename');
      const response = await client.patch('/api/v1/packages/NoRename', { name: 'Renamed' });
      expect(response.status).toBe(422);
      expect((await registry.api.get('/api/v1/packages/NoRename')).status).toBe(200);
    });
  });

  describe('delete', () => {
    it('is admin only (403 for the owner)', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'KeepMe');
      const response = await client.delete('/api/v1/packages/KeepMe');
      expect(response.status).toBe(403);
      expect((await registry.api.get('/api/v1/packages/KeepMe')).status).toBe(200);
    });

    it('answers 204 and removes the package, its versions and every stored file', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'DoomedPkg');
      expect((await uploadVersion(client, 'DoomedPkg', '1.0.0')).status).toBe(201);
      const ticket = await registry.api.get('/api/v1/packages/DoomedPkg/versions/1.0.0/download');
      const response = await registry.as(ADMIN).delete('/api/v1/packages/DoomedPkg');
      expect(response.status).toBe(204);
      expect(response.bytes.length).toBe(0);
      expect((await registry.api.get('/api/v1/packages/DoomedPkg')).status).toBe(404);
      expect(await registry.queue.whenIdle(20_000)).toBe(true);
      expect((await registry.api.get(ticket.body.url)).status).toBe(404);
    });

    it('answers 404 for an unknown package', async () => {
      expect((await registry.as(ADMIN).delete('/api/v1/packages/NeverWas')).status).toBe(404);
    });
  });
});
