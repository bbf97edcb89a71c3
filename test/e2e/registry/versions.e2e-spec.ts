import { createHash } from 'node:crypto';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { eventually } from '../../support/eventually.js';
import {
  ADMIN,
  createPackage,
  publisherFactory,
  samplePackageZip,
  uploadVersion,
} from '../../support/registry-fixtures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(backends())('package versions on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend);
  });

  afterAll(async () => {
    await registry?.close();
  });

  describe('upload', () => {
    it('stores a version and answers 201 with its checksum and a working download URL', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'UpOne');
      const zip = samplePackageZip('one');
      const response = await uploadVersion(client, 'UpOne', '1.0.0', {}, zip);
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        status: 'uploaded',
        package: 'UpOne',
        version: '1.0.0',
        size: zip.length,
        checksum_sha256: sha256(zip),
      });
      expect(response.body.published_at).toMatch(/Z$/);
      const file = await registry.api.get(response.body.download_url);
      expect(file.status).toBe(200);
      expect(sha256(file.bytes)).toBe(sha256(zip));
    });

    it('accepts the second form POST /versions with toolbox_version and dependencies', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'UpTwo');
      const response = await client.postForm('/api/v1/packages/UpTwo/versions', {
        version: '2.1.0',
        toolbox_version: '>=0.1.0 <1.0.0',
        dependencies: JSON.stringify(['lib>=1.2.0', { name: 'other', version: '^2.0.0' }]),
        file: { filename: 'x.zip', content: samplePackageZip() },
      });
      expect(response.status).toBe(201);
      const detail = await registry.api.get('/api/v1/packages/UpTwo/versions/2.1.0', { accept: 'application/json' });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        version: '2.1.0',
        toolbox_version: '>=0.1.0 <1.0.0',
        dependencies: ['lib>=1.2.0', 'other^2.0.0'],
      });
      expect(detail.body.download_url).toContain('/api/v1/files/');
    });

    it.each(['1.0', 'latest', 'v', '1.0.0.0'])('rejects the version %j with 422', async (version) => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, `Semver${version.replace(/\W/g, '')}`);
      const response = await uploadVersion(client, `Semver${version.replace(/\W/g, '')}`, version);
      expect(response.status).toBe(422);
      expect(response.body.detail).toContain('semantic version');
    });

    it('rejects an invalid toolbox_version range with 422', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'BadHost');
      const response = await uploadVersion(client, 'BadHost', '1.0.0', { toolbox_version: 'banana' });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('toolbox_version');
    });

    it('rejects malformed dependencies with 422 naming the requirement', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'BadDeps');
      const response = await uploadVersion(client, 'BadDeps', '1.0.0', { dependencies: JSON.stringify(['lib>>>1']) });
      expect(response.status).toBe(422);
      expect(response.body.detail).toContain('lib>>>1');
    });

    it('answers 409 for an existing version and keeps the first file', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'Twice');
      const first = samplePackageZip('first');
      expect((await uploadVersion(client, 'Twice', '1.0.0', {}, first)).status).toBe(201);
      const second = await uploadVersion(client, 'Twice', '1.0.0', {}, samplePackageZip('second'));
      expect(second.status).toBe(409);
      const file = await registry.api.get('/api/v1/packages/Twice/versions/1.0.0');
      expect(sha256(file.bytes)).toBe(sha256(first));
    });

    it("refuses an upload to another publisher's package with 403", async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'Guarded');
      const other = await publisherFactory(registry);
      const response = await uploadVersion(other.client, 'Guarded', '1.0.0');
      expect(response.status).toBe(403);
      expect((await registry.api.get('/api/v1/packages/Guarded')).body.versions).toEqual([]);
    });

    it('requires the file (422)', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'NoFile');
      const response = await client.postForm('/api/v1/packages/NoFile/upload', { version: '1.0.0' });
      expect(response.status).toBe(422);
      expect(response.body.detail).toMatch(/file/);
    });

    it('answers 400 for a body that is not multipart', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'JsonUpload');
      const response = await client.post('/api/v1/packages/JsonUpload/upload', { version: '1.0.0' });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
    });
  });

  describe('latest_version', () => {
    it('stays 2.0.0 when 1.5.0 is uploaded after it', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'Latest');
      await uploadVersion(client, 'Latest', '2.0.0');
      await uploadVersion(client, 'Latest', '1.5.0');
      const detail = await registry.api.get('/api/v1/packages/Latest');
      expect(detail.body.latest_version).toBe('2.0.0');
      expect(detail.body.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.5.0']);
    });

    it('ignores prereleases while a stable version exists and follows yank and unyank', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'Yanky');
      await uploadVersion(client, 'Yanky', '1.0.0');
      await uploadVersion(client, 'Yanky', '1.1.0');
      await uploadVersion(client, 'Yanky', '2.0.0-beta.1');
      expect((await registry.api.get('/api/v1/packages/Yanky')).body.latest_version).toBe('1.1.0');

      const yank = await client.post('/api/v1/packages/Yanky/versions/1.1.0/yank', { reason: 'broken build' });
      expect(yank.status).toBe(200);
      expect(yank.body).toMatchObject({ version: '1.1.0', yanked: true, yank_reason: 'broken build' });
      expect((await registry.api.get('/api/v1/packages/Yanky')).body.latest_version).toBe('1.0.0');

      const unyank = await client.post('/api/v1/packages/Yanky/versions/1.1.0/unyank');
      expect(unyank.status).toBe(200);
      expect(unyank.body).toMatchObject({ yanked: false, yank_reason: null });
      expect((await registry.api.get('/api/v1/packages/Yanky')).body.latest_version).toBe('1.1.0');
    });
  });

  describe('yank', () => {
    it('keeps a yanked version downloadable by its exact version', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'StillThere');
      const zip = samplePackageZip('kept');
      await uploadVersion(client, 'StillThere', '1.0.0', {}, zip);
      await client.post('/api/v1/packages/StillThere/versions/1.0.0/yank', { reason: 'cve' });
      const ticket = await registry.api.get('/api/v1/packages/StillThere/versions/1.0.0/download');
      expect(ticket.status).toBe(200);
      expect(ticket.body.yanked).toBe(true);
      const file = await registry.api.get(ticket.body.url);
      expect(sha256(file.bytes)).toBe(sha256(zip));
    });

    it('refuses a yank by someone else with 403 and lets an admin yank', async () => {
      const owner = await publisherFactory(registry);
      await createPackage(owner.client, 'YankGuard');
      await uploadVersion(owner.client, 'YankGuard', '1.0.0');
      const other = await publisherFactory(registry);
      expect((await other.client.post('/api/v1/packages/YankGuard/versions/1.0.0/yank', { reason: 'x' })).status).toBe(
        403,
      );
      const admin = await registry
        .as(ADMIN)
        .post('/api/v1/packages/YankGuard/versions/1.0.0/yank', { reason: 'policy' });
      expect(admin.status).toBe(200);
      expect(admin.body.yanked).toBe(true);
    });

    it('answers 404 for an unknown version', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'YankMissing');
      expect((await client.post('/api/v1/packages/YankMissing/versions/9.9.9/yank', { reason: 'x' })).status).toBe(404);
    });
  });

  describe('downloads', () => {
    let zip: Buffer;
    let owner: Awaited<ReturnType<typeof publisherFactory>>;

    beforeAll(async () => {
      owner = await publisherFactory(registry);
      await createPackage(owner.client, 'Fetchable');
      zip = samplePackageZip('fetch');
      await uploadVersion(owner.client, 'Fetchable', '1.0.0', {}, zip);
    });

    it('returns a signed URL with expiry, size, checksum and filename', async () => {
      const response = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0/download');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        expires_in: 600,
        size: zip.length,
        checksum_sha256: sha256(zip),
        filename: 'Fetchable-1.0.0.zip',
        yanked: false,
      });
      expect(response.body.url).toMatch(/\/api\/v1\/files\/.+\?expires=\d+&signature=[0-9a-f]{64}$/);
    });

    it('serves the signed URL even when a client attaches an Authorization header', async () => {
      const ticket = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0/download');
      const file = await registry.api.get(ticket.body.url, { authorization: 'Bearer not-a-real-token' });
      expect(file.status).toBe(200);
      expect(sha256(file.bytes)).toBe(sha256(zip));
    });

    it('refuses a tampered signed URL with 403', async () => {
      const ticket = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0/download');
      const tampered = ticket.body.url.replace(
        /signature=(.)/,
        (_: string, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`,
      );
      const response = await registry.api.get(tampered);
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
      const laterExpiry = ticket.body.url.replace(
        /expires=(\d+)/,
        (_: string, e: string) => `expires=${Number(e) + 1000}`,
      );
      expect((await registry.api.get(laterExpiry)).status).toBe(403);
    });

    it('refuses an expired signed URL with 403', async () => {
      const short = await startRegistry(backend, { SIGNED_URL_TTL_SECONDS: '1' });
      try {
        const { client } = await publisherFactory(short);
        await createPackage(client, 'Expiring');
        await uploadVersion(client, 'Expiring', '1.0.0');
        const ticket = await short.api.get('/api/v1/packages/Expiring/versions/1.0.0/download');
        await new Promise((resolve) => setTimeout(resolve, 2100));
        const response = await short.api.get(ticket.body.url);
        expect(response.status).toBe(403);
        expect(response.body.detail).toMatch(/expired/);
      } finally {
        await short.close();
      }
    });

    it('serves the file directly with ETag, Content-Length and range support', async () => {
      const full = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0');
      expect(full.status).toBe(200);
      expect(full.headers.get('content-type')).toBe('application/zip');
      expect(full.headers.get('etag')).toBe(`"${sha256(zip)}"`);
      expect(Number(full.headers.get('content-length'))).toBe(zip.length);
      const partial = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0', { range: 'bytes=10-19' });
      expect(partial.status).toBe(206);
      expect(partial.headers.get('content-range')).toBe(`bytes 10-19/${zip.length}`);
      expect(partial.bytes.equals(zip.subarray(10, 20))).toBe(true);
      const notModified = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0', {
        'if-none-match': `"${sha256(zip)}"`,
      });
      expect(notModified.status).toBe(304);
      const unsatisfiable = await registry.api.get('/api/v1/packages/Fetchable/versions/1.0.0', {
        range: `bytes=${zip.length + 10}-`,
      });
      expect(unsatisfiable.status).toBe(416);
    });

    it('counts served files on the version, the package and the publisher', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      await createPackage(client, 'Counted');
      await uploadVersion(client, 'Counted', '1.0.0');
      await registry.api.get('/api/v1/packages/Counted/versions/1.0.0');
      const ticket = await registry.api.get('/api/v1/packages/Counted/versions/1.0.0/download');
      await registry.api.get(ticket.body.url);
      // A ticket alone is not a download.
      await registry.api.get('/api/v1/packages/Counted/versions/1.0.0/download');
      const detail = await eventually(
        () => registry.api.get('/api/v1/packages/Counted'),
        (r) => r.body.total_downloads === 2,
      );
      expect(detail.body.total_downloads).toBe(2);
      expect(detail.body.downloads).toBe(2);
      expect(detail.body.versions[0].downloads).toBe(2);
      const publisher = await client.get('/api/v1/auth/publisher');
      expect(publisher.body).toMatchObject({ name: publisherName, package_count: 1, total_downloads: 2 });
    });

    it('applies visibility: unlisted needs a token, private only the owner', async () => {
      const { client } = await publisherFactory(registry);
      await createPackage(client, 'DlUnlisted', { visibility: 'unlisted' });
      await createPackage(client, 'DlPrivate', { visibility: 'private' });
      await uploadVersion(client, 'DlUnlisted', '1.0.0');
      await uploadVersion(client, 'DlPrivate', '1.0.0');
      const stranger = registry.as({ id: 'dl-stranger', username: 'dls' });
      expect((await registry.api.get('/api/v1/packages/DlUnlisted/versions/1.0.0/download')).status).toBe(404);
      expect((await stranger.get('/api/v1/packages/DlUnlisted/versions/1.0.0/download')).status).toBe(200);
      expect((await stranger.get('/api/v1/packages/DlPrivate/versions/1.0.0/download')).status).toBe(404);
      expect((await stranger.get('/api/v1/packages/DlPrivate/versions/1.0.0')).status).toBe(404);
      expect((await client.get('/api/v1/packages/DlPrivate/versions/1.0.0/download')).status).toBe(200);
    });

    it('answers 404 for an unknown version', async () => {
      const response = await registry.api.get('/api/v1/packages/Fetchable/versions/3.0.0/download');
      expect(response.status).toBe(404);
      expect(response.body.detail).toContain('3.0.0');
    });
  });
});
