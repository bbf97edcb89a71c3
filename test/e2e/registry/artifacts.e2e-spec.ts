import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN, publisherFactory } from '../../support/registry-fixtures.js';
import { eventually } from '../../support/eventually.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Files under the object store's artifacts/ prefix (the local primary store of a test registry). */
async function storedArtifactFiles(registry: RegistryUnderTest): Promise<string[]> {
  try {
    const entries = await readdir(join(registry.dataDir, 'objects', 'artifacts'), {
      recursive: true,
      withFileTypes: true,
    });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter += 1)}`;

function uploadBuild(
  client: ApiClient,
  name: string,
  fields: Record<string, string>,
  content: Buffer = randomBytes(2048),
  filename = 'app.bin',
) {
  return client.postForm(`/api/v1/artifacts/${name}/builds`, {
    ...fields,
    file: { filename, content, type: 'application/octet-stream' },
  });
}

describe.each(backends())('artifacts on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend);
  });

  afterAll(async () => {
    await registry?.close();
  });

  async function artifactOwner(type = 'desktop_app') {
    const publisher = await publisherFactory(registry);
    const name = uniqueName('app');
    const response = await publisher.client.post('/api/v1/artifacts', {
      name,
      artifact_type: type,
      description: 'An app',
      homepage: 'https://example.com',
    });
    if (response.status !== 201)
      throw new Error(`create artifact: ${response.status} ${JSON.stringify(response.body)}`);
    return { ...publisher, name };
  }

  it('documents the artifact and admin routes in OpenAPI, under both admin prefixes', async () => {
    const document = await registry.api.get('/api/docs-json');
    expect(document.status).toBe(200);
    expect(Object.keys(document.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/artifacts',
        '/api/v1/artifacts/{name}/builds',
        '/api/v1/artifacts/{name}/latest',
        '/api/v1/artifacts/{name}/versions/{version}/download',
        '/api/v1/artifacts/{name}/{version}',
        '/api/v1/packages/admin/pending',
        '/api/v1/publishers/admin/{publisher_id}/verify',
        '/api/v1/packages/admin/{publisher_id}/unsuspend',
        '/api/v1/admin/audit',
      ]),
    );
    expect(document.body.paths['/api/v1/artifacts/{name}/builds'].post.security).toEqual([{ bearer: [] }]);
  });

  describe('create, list and detail', () => {
    it('creates an artifact and answers 201 with the artifact view', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      const response = await client.post('/api/v1/artifacts', {
        name: 'ToolboxDesktop',
        artifact_type: 'desktop_app',
        description: 'The desktop app',
        homepage: 'https://example.com',
        repository: 'https://github.com/example/app',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        id: expect.any(String),
        name: 'ToolboxDesktop',
        artifact_type: 'desktop_app',
        description: 'The desktop app',
        homepage: 'https://example.com',
        repository: 'https://github.com/example/app',
        publisher: { name: publisherName },
        latest_version: null,
        versions: [],
      });
      expect(response.body.created_at).toMatch(/Z$/);
      expect(response.body.updated_at).toMatch(/Z$/);
    });

    it('accepts tauri_app as an alias of desktop_app', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/artifacts', {
        name: uniqueName('tauri'),
        artifact_type: 'tauri_app',
      });
      expect(response.status).toBe(201);
      expect(response.body.artifact_type).toBe('desktop_app');
    });

    it.each(['game', '', 'Desktop_App'])('rejects the artifact_type %j with 422', async (artifactType) => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/artifacts', { name: uniqueName('bad'), artifact_type: artifactType });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('artifact_type');
    });

    it('refuses a name that differs only in case with 409', async () => {
      const { client, name } = await artifactOwner();
      const response = await client.post('/api/v1/artifacts', { name: name.toUpperCase(), artifact_type: 'library' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('CONFLICT');
    });

    it('refuses a user without a publisher with 403', async () => {
      const response = await registry
        .as({ id: 'artifact-no-pub', username: 'nopub' })
        .post('/api/v1/artifacts', { name: uniqueName('x'), artifact_type: 'library' });
      expect(response.status).toBe(403);
    });

    it('requires a token (401)', async () => {
      const response = await registry.api.post('/api/v1/artifacts', {
        name: uniqueName('x'),
        artifact_type: 'library',
      });
      expect(response.status).toBe(401);
    });

    it('refuses a suspended publisher with 403', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      const id = (await registry.api.get(`/api/v1/publishers/${publisherName}`)).body.id;
      await registry.as(ADMIN).post(`/api/v1/packages/admin/${id}/suspend`, { notes: 'abuse' });
      const response = await client.post('/api/v1/artifacts', { name: uniqueName('susp'), artifact_type: 'library' });
      expect(response.status).toBe(403);
      expect(response.body.message).toContain('suspended');
    });

    it('lists artifacts with filters by type and publisher', async () => {
      const cli = await artifactOwner('cli_executable');
      await artifactOwner('library');
      const byType = await registry.api.get('/api/v1/artifacts?artifact_type=cli_executable&per_page=100');
      expect(byType.status).toBe(200);
      expect(byType.body.artifacts.map((a: { name: string }) => a.name)).toContain(cli.name);
      expect(byType.body.artifacts.every((a: { artifact_type: string }) => a.artifact_type === 'cli_executable')).toBe(
        true,
      );
      const byPublisher = await registry.api.get(`/api/v1/artifacts?publisher=${cli.publisherName}`);
      expect(byPublisher.body).toMatchObject({ total: 1, page: 1, per_page: 20 });
      expect(byPublisher.body.artifacts[0]).toMatchObject({
        name: cli.name,
        artifact_type: 'cli_executable',
        publisher: { name: cli.publisherName },
      });
    });

    it('pages the list', async () => {
      await artifactOwner();
      await artifactOwner();
      const response = await registry.api.get('/api/v1/artifacts?page=2&per_page=1');
      expect(response.status).toBe(200);
      expect(response.body.artifacts).toHaveLength(1);
      expect(response.body.total).toBeGreaterThanOrEqual(2);
    });

    it('answers 400 for an unknown artifact_type filter', async () => {
      expect((await registry.api.get('/api/v1/artifacts?artifact_type=game')).status).toBe(400);
    });

    it('answers 404 for an unknown artifact', async () => {
      const response = await registry.api.get('/api/v1/artifacts/nothing-here');
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    });
  });

  describe('builds', () => {
    it('holds one build per platform and architecture of a version', async () => {
      const { client, name } = await artifactOwner();
      const windows = randomBytes(3000);
      const first = await uploadBuild(
        client,
        name,
        {
          version: '1.0.0',
          platform: 'windows',
          architecture: 'x64',
          changelog: 'First',
          installer_type: 'msi',
          min_os_version: '10',
        },
        windows,
        'app-setup.msi',
      );
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        artifact: name,
        version: '1.0.0',
        changelog: 'First',
        min_os_version: '10',
        builds: [
          {
            platform: 'windows',
            architecture: 'x64',
            filename: 'app-setup.msi',
            size_bytes: 3000,
            checksum_sha256: sha256(windows),
            installer_type: 'msi',
            downloads: 0,
          },
        ],
      });
      expect(first.body.released_at).toMatch(/Z$/);
      expect(
        (
          await uploadBuild(
            client,
            name,
            { version: '1.0.0', platform: 'linux', architecture: 'x64', installer_type: 'appimage' },
            randomBytes(100),
            'app.AppImage',
          )
        ).status,
      ).toBe(201);
      const third = await uploadBuild(
        client,
        name,
        { version: '1.0.0', platform: 'macos', architecture: 'arm64' },
        randomBytes(100),
        'app.dmg',
      );
      expect(third.status).toBe(201);
      expect(third.body.builds).toHaveLength(3);

      const detail = await registry.api.get(`/api/v1/artifacts/${name}`);
      expect(detail.body.latest_version).toBe('1.0.0');
      expect(detail.body.versions).toHaveLength(1);
      expect(detail.body.versions[0]).toMatchObject({ version: '1.0.0', changelog: 'First', min_os_version: '10' });
      expect(
        detail.body.versions[0].builds.map(
          (b: { platform: string; architecture: string }) => `${b.platform}/${b.architecture}`,
        ),
      ).toEqual(['linux/x64', 'macos/arm64', 'windows/x64']);
    });

    it('refuses the same platform and architecture twice with 409 and leaves nothing in storage', async () => {
      const { client, name } = await artifactOwner();
      const original = randomBytes(500);
      expect(
        (await uploadBuild(client, name, { version: '2.0.0', platform: 'linux', architecture: 'arm64' }, original))
          .status,
      ).toBe(201);
      const before = await storedArtifactFiles(registry);
      const again = await uploadBuild(
        client,
        name,
        { version: '2.0.0', platform: 'linux', architecture: 'arm64' },
        randomBytes(600),
      );
      expect(again.status).toBe(409);
      expect(again.body.message).toContain('linux/arm64');
      expect((await storedArtifactFiles(registry)).sort()).toEqual(before.sort());
      const file = await registry.api.get(`/api/v1/artifacts/${name}/2.0.0?platform=linux&architecture=arm64`);
      expect(sha256(file.bytes)).toBe(sha256(original));
    });

    it('keeps a version newer than the others as latest_version whatever the upload order', async () => {
      const { client, name } = await artifactOwner();
      await uploadBuild(client, name, { version: '2.0.0', platform: 'all', architecture: 'all' });
      await uploadBuild(client, name, { version: '1.5.0', platform: 'all', architecture: 'all' });
      const detail = await registry.api.get(`/api/v1/artifacts/${name}`);
      expect(detail.body.latest_version).toBe('2.0.0');
      expect(detail.body.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.5.0']);
    });

    it('defaults platform and architecture to all', async () => {
      const { client, name } = await artifactOwner('library');
      const response = await uploadBuild(client, name, { version: '0.1.0' });
      expect(response.status).toBe(201);
      expect(response.body.build).toMatchObject({ platform: 'all', architecture: 'all' });
    });

    it.each([
      ['platform', { version: '1.0.0', platform: 'beos', architecture: 'x64' }],
      ['architecture', { version: '1.0.0', platform: 'linux', architecture: 'mips' }],
      ['version', { version: 'one', platform: 'linux', architecture: 'x64' }],
    ])('rejects a bad %s with 422 and stores nothing', async (field, fields) => {
      const { client, name } = await artifactOwner();
      const before = await storedArtifactFiles(registry);
      const response = await uploadBuild(client, name, fields);
      expect(response.status).toBe(422);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await storedArtifactFiles(registry)).toEqual(before);
    });

    it('requires the file (422)', async () => {
      const { client, name } = await artifactOwner();
      const response = await client.postForm(`/api/v1/artifacts/${name}/builds`, {
        version: '1.0.0',
        platform: 'linux',
        architecture: 'x64',
      });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('file');
    });

    it('accepts any binary, not only ZIP archives', async () => {
      const { client, name } = await artifactOwner('cli_executable');
      const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), randomBytes(1000)]);
      const response = await uploadBuild(
        client,
        name,
        { version: '1.0.0', platform: 'linux', architecture: 'x64' },
        elf,
        'tool',
      );
      expect(response.status).toBe(201);
      expect(response.body.build.checksum_sha256).toBe(sha256(elf));
    });

    it("refuses an upload to another publisher's artifact with 403", async () => {
      const { name } = await artifactOwner();
      const other = await publisherFactory(registry);
      const response = await uploadBuild(other.client, name, {
        version: '1.0.0',
        platform: 'linux',
        architecture: 'x64',
      });
      expect(response.status).toBe(403);
      expect((await registry.api.get(`/api/v1/artifacts/${name}`)).body.versions).toEqual([]);
    });

    it('refuses an upload from a suspended publisher with 403', async () => {
      const { client, name, publisherName } = await artifactOwner();
      const id = (await registry.api.get(`/api/v1/publishers/${publisherName}`)).body.id;
      await registry.as(ADMIN).post(`/api/v1/publishers/admin/${id}/suspend`, {});
      const response = await uploadBuild(client, name, { version: '1.0.0', platform: 'linux', architecture: 'x64' });
      expect(response.status).toBe(403);
      expect(response.body.message).toContain('suspended');
    });

    it('answers 404 for a build upload to an unknown artifact', async () => {
      const { client } = await publisherFactory(registry);
      expect((await uploadBuild(client, 'no-such-artifact', { version: '1.0.0' })).status).toBe(404);
    });
  });

  describe('latest build', () => {
    let owner: Awaited<ReturnType<typeof artifactOwner>>;

    beforeAll(async () => {
      owner = await artifactOwner();
      // 1.0.0: universal build; 1.1.0: windows x64 and linux for all architectures; 2.0.0: windows x64 only.
      await uploadBuild(owner.client, owner.name, {
        version: '1.0.0',
        platform: 'all',
        architecture: 'all',
        changelog: 'universal',
      });
      await uploadBuild(owner.client, owner.name, { version: '1.1.0', platform: 'windows', architecture: 'x64' });
      await uploadBuild(owner.client, owner.name, {
        version: '1.1.0',
        platform: 'linux',
        architecture: 'all',
        changelog: 'linux',
      });
      await uploadBuild(
        owner.client,
        owner.name,
        { version: '2.0.0', platform: 'windows', architecture: 'x64', changelog: 'two' },
        randomBytes(10),
        'app-2.exe',
      );
    });

    it('answers the latest-build view for an exact match', async () => {
      const response = await registry.api.get(
        `/api/v1/artifacts/${owner.name}/latest?platform=windows&architecture=x64`,
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        version: '2.0.0',
        changelog: 'two',
        build: { platform: 'windows', architecture: 'x64', filename: 'app-2.exe', size_bytes: 10 },
      });
      expect(response.body.released_at).toMatch(/Z$/);
      expect(response.body.build.checksum_sha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it('reaches back to the highest version with a matching build', async () => {
      const response = await registry.api.get(
        `/api/v1/artifacts/${owner.name}/latest?platform=linux&architecture=arm64`,
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ version: '1.1.0', build: { platform: 'linux', architecture: 'all' } });
    });

    it('falls back to a build for all platforms', async () => {
      const response = await registry.api.get(
        `/api/v1/artifacts/${owner.name}/latest?platform=macos&architecture=arm64`,
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        version: '1.0.0',
        changelog: 'universal',
        build: { platform: 'all', architecture: 'all' },
      });
    });

    it('prefers the exact platform over all within a version', async () => {
      const { client, name } = await artifactOwner();
      await uploadBuild(client, name, { version: '1.0.0', platform: 'all', architecture: 'all' });
      await uploadBuild(client, name, { version: '1.0.0', platform: 'linux', architecture: 'x64' });
      const linux = await registry.api.get(`/api/v1/artifacts/${name}/latest?platform=linux&architecture=x64`);
      expect(linux.body.build).toMatchObject({ platform: 'linux', architecture: 'x64' });
      const windows = await registry.api.get(`/api/v1/artifacts/${name}/latest?platform=windows&architecture=x64`);
      expect(windows.body.build).toMatchObject({ platform: 'all', architecture: 'all' });
    });

    it('answers 404 naming the platform when nothing matches', async () => {
      const { client, name } = await artifactOwner();
      await uploadBuild(client, name, { version: '1.0.0', platform: 'windows', architecture: 'x64' });
      const response = await registry.api.get(`/api/v1/artifacts/${name}/latest?platform=ios&architecture=arm64`);
      expect(response.status).toBe(404);
      expect(response.body.message).toContain('ios');
    });

    it('answers 400 for an unknown platform', async () => {
      expect((await registry.api.get(`/api/v1/artifacts/${owner.name}/latest?platform=beos`)).status).toBe(400);
    });
  });

  describe('downloads', () => {
    it('downloads through a signed URL, byte for byte, and counts it', async () => {
      const { client, name } = await artifactOwner();
      const content = randomBytes(70_000);
      const upload = await uploadBuild(
        client,
        name,
        { version: '3.1.0', platform: 'windows', architecture: 'arm64' },
        content,
        'setup-arm.exe',
      );
      const ticket = await registry.api.get(
        `/api/v1/artifacts/${name}/versions/3.1.0/download?platform=windows&architecture=arm64`,
      );
      expect(ticket.status).toBe(200);
      expect(ticket.body.expires_in).toBe(registry.config.registry.signedUrlTtlSeconds);
      expect(ticket.body.url).toContain('/api/v1/files/artifacts/');
      const file = await registry.api.get(ticket.body.url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-disposition')).toContain('setup-arm.exe');
      expect(sha256(file.bytes)).toBe(upload.body.build.checksum_sha256);
      expect(sha256(file.bytes)).toBe(sha256(content));
      const detail = await eventually(
        () => registry.api.get(`/api/v1/artifacts/${name}`),
        (r) => r.body.total_downloads === 1,
      );
      expect(detail.body.versions[0].builds[0].downloads).toBe(1);
      expect(detail.body.total_downloads).toBe(1);
    });

    it('serves a build directly with Content-Disposition and X-Checksum-Sha256', async () => {
      const { client, name } = await artifactOwner();
      const content = randomBytes(12_345);
      await uploadBuild(
        client,
        name,
        { version: '1.2.3', platform: 'linux', architecture: 'x64' },
        content,
        'tool-linux.tar.gz',
      );
      await uploadBuild(
        client,
        name,
        { version: '1.2.3', platform: 'windows', architecture: 'x64' },
        randomBytes(10),
        'tool.exe',
      );
      const response = await registry.api.get(`/api/v1/artifacts/${name}/1.2.3?platform=linux&architecture=x64`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-disposition')).toBe('attachment; filename="tool-linux.tar.gz"');
      expect(response.headers.get('x-checksum-sha256')).toBe(sha256(content));
      expect(sha256(response.bytes)).toBe(response.headers.get('x-checksum-sha256'));
      const detail = await eventually(
        () => registry.api.get(`/api/v1/artifacts/${name}`),
        (r) => r.body.total_downloads === 1,
      );
      const linux = detail.body.versions[0].builds.find((b: { platform: string }) => b.platform === 'linux');
      expect(linux).toMatchObject({ checksum_sha256: sha256(content), downloads: 1 });
    });

    it('lets platform and architecture be left out when the version has one build', async () => {
      const { client, name } = await artifactOwner();
      const content = randomBytes(999);
      await uploadBuild(
        client,
        name,
        { version: '0.9.0', platform: 'macos', architecture: 'arm64' },
        content,
        'app.dmg',
      );
      const response = await registry.api.get(`/api/v1/artifacts/${name}/0.9.0`);
      expect(response.status).toBe(200);
      expect(sha256(response.bytes)).toBe(sha256(content));
    });

    it('answers 400 listing the builds when several could be meant', async () => {
      const { client, name } = await artifactOwner();
      await uploadBuild(client, name, { version: '1.0.0', platform: 'linux', architecture: 'x64' });
      await uploadBuild(client, name, { version: '1.0.0', platform: 'windows', architecture: 'x64' });
      const response = await registry.api.get(`/api/v1/artifacts/${name}/1.0.0`);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain('linux/x64');
      expect(response.body.message).toContain('windows/x64');
    });

    it('answers 404 for a platform the version has no build for', async () => {
      const { client, name } = await artifactOwner();
      await uploadBuild(client, name, { version: '1.0.0', platform: 'linux', architecture: 'x64' });
      const direct = await registry.api.get(`/api/v1/artifacts/${name}/1.0.0?platform=android`);
      expect(direct.status).toBe(404);
      expect(direct.body.message).toContain('android');
      const ticket = await registry.api.get(`/api/v1/artifacts/${name}/versions/1.0.0/download?platform=android`);
      expect(ticket.status).toBe(404);
    });

    it('answers 404 for an unknown version', async () => {
      const { name } = await artifactOwner();
      const response = await registry.api.get(`/api/v1/artifacts/${name}/9.9.9`);
      expect(response.status).toBe(404);
      expect(response.body.message).toContain('9.9.9');
    });

    it('serves a byte range of a build', async () => {
      const { client, name } = await artifactOwner();
      const content = randomBytes(1000);
      await uploadBuild(client, name, { version: '1.0.0', platform: 'all', architecture: 'all' }, content);
      const response = await registry.api.get(`/api/v1/artifacts/${name}/1.0.0`, { range: 'bytes=100-199' });
      expect(response.status).toBe(206);
      expect(response.bytes.equals(content.subarray(100, 200))).toBe(true);
    });
  });
});

describe.each(backends())('artifact upload size cap on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend, { UPLOAD_MAX_BYTES: '4096' });
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('refuses a build over UPLOAD_MAX_BYTES with 413 and stores nothing', async () => {
    const { client } = await publisherFactory(registry);
    expect((await client.post('/api/v1/artifacts', { name: 'big-app', artifact_type: 'desktop_app' })).status).toBe(
      201,
    );
    const response = await uploadBuild(
      client,
      'big-app',
      { version: '1.0.0', platform: 'linux', architecture: 'x64' },
      randomBytes(5000),
    );
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await storedArtifactFiles(registry)).toEqual([]);
    expect((await registry.api.get('/api/v1/artifacts/big-app')).body.versions).toEqual([]);
  });
});
