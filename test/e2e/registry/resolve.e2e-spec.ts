import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';

interface Release {
  version: string;
  dependencies?: string[];
  toolbox?: string;
}

describe.each(backends())('resolve on $name', (backend) => {
  let registry: RegistryUnderTest;
  let owner: ApiClient;

  async function publish(
    client: ApiClient,
    name: string,
    releases: Release[],
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await createPackage(client, name, extra);
    for (const release of releases) {
      const fields: Record<string, string> = {};
      if (release.dependencies) fields.dependencies = JSON.stringify(release.dependencies);
      if (release.toolbox) fields.toolbox_version = release.toolbox;
      const response = await uploadVersion(client, name, release.version, fields);
      if (response.status !== 201)
        throw new Error(`upload ${name} ${release.version}: ${response.status} ${JSON.stringify(response.body)}`);
    }
  }

  beforeAll(async () => {
    registry = await startRegistry(backend);
    ({ client: owner } = await publisherFactory(registry));
    await publish(owner, 'base', [{ version: '1.0.0' }, { version: '1.4.2' }, { version: '2.0.0' }]);
    await publish(owner, 'LibCore', [
      { version: '1.2.0', dependencies: ['base^1.0'] },
      { version: '1.3.0', dependencies: ['base>=1.4,<2.0'] },
    ]);
    await publish(owner, 'CloudM', [
      { version: '2.0.0', dependencies: ['libcore^1.2'] },
      { version: '2.1.0', dependencies: ['LibCore~1.3', 'base^1'] },
    ]);
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('resolves requirement strings with their transitive dependencies', async () => {
    const response = await registry.api.post('/api/v1/resolve', {
      requirements: ['CloudM>=2.0.0'],
      toolbox_version: '1.5.0',
    });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(Object.keys(response.body.resolved).sort()).toEqual(['CloudM', 'LibCore', 'base']);
    expect(response.body.resolved.CloudM).toMatchObject({
      name: 'CloudM',
      version: '2.1.0',
      dependencies: ['LibCore~1.3', 'base^1'],
    });
    expect(response.body.resolved.LibCore.version).toBe('1.3.0');
    expect(response.body.resolved.base.version).toBe('1.4.2');
    expect(response.body).toMatchObject({ conflicts: [], warnings: [], errors: [] });
  });

  it('gives a download URL that serves the file with the reported checksum', async () => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['base==1.0.0'] });
    const entry = response.body.resolved.base;
    expect(entry.checksum).toBe(entry.checksum_sha256);
    const file = await registry.api.get(entry.download_url);
    expect(file.status).toBe(200);
    expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(entry.checksum);
  });

  it('accepts the packages form with version ranges', async () => {
    const response = await registry.api.post('/api/v1/resolve', {
      packages: [{ name: 'base', version: '~1.0.0' }, { name: 'LibCore' }],
    });
    expect(response.body.success).toBe(true);
    // LibCore 1.3.0 needs base >=1.4, which ~1.0.0 excludes: the older LibCore fits.
    expect(response.body.resolved.base.version).toBe('1.0.0');
    expect(response.body.resolved.LibCore.version).toBe('1.2.0');
  });

  it.each([
    ['lib^1.2'],
    ['x==1.0.0'],
    ['y'],
    ['base>=1.0,<2.0'],
    ['base 1.0.0 - 1.4.2'],
    ['base >=1 <2 || >=3'],
    ['base@^1'],
    ['base~=1.4'],
  ])('understands the requirement form %s', async (requirement) => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: [requirement] });
    expect(response.status).toBe(200);
    expect(typeof response.body.success).toBe('boolean');
  });

  it('picks the highest version a comma-separated set allows', async () => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['base>=1.0,<2.0'] });
    expect(response.body.resolved.base.version).toBe('1.4.2');
  });

  it.each([['base>>1'], ['!!!'], ['base^'], ['base@'], ['bad name>=1']])(
    'refuses the malformed requirement %j with 400 naming it',
    async (requirement) => {
      const response = await registry.api.post('/api/v1/resolve', { requirements: ['base', requirement] });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(requirement.trim());
    },
  );

  it('refuses a malformed toolbox_version with 400', async () => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['base'], toolbox_version: 'banana' });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('banana');
  });

  it('refuses a request without requirements with 400', async () => {
    const response = await registry.api.post('/api/v1/resolve', { toolbox_version: '1.0.0' });
    expect(response.status).toBe(400);
  });

  it('refuses requirements of the wrong type with 422', async () => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: 'base' });
    expect(response.status).toBe(422);
  });

  it('names the chain that caused a conflict', async () => {
    await publish(owner, 'cli', [{ version: '3.1.0', dependencies: ['LibCore~1.2'] }]);
    await publish(owner, 'app', [{ version: '1.0.0', dependencies: ['LibCore^1.3'] }]);
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['app', 'cli'] });
    expect(response.body.success).toBe(false);
    expect(response.body.resolved).toEqual({});
    expect(response.body.conflicts.join('\n')).toMatch(
      /app 1\.0\.0 needs LibCore \^1\.3.*cli 3\.1\.0 needs LibCore ~1\.2|cli 3\.1\.0 needs LibCore ~1\.2.*app 1\.0\.0 needs LibCore \^1\.3/,
    );
    expect(response.body.errors).toEqual(response.body.conflicts);
  });

  it('backtracks to a lower version when the highest leads to a conflict', async () => {
    await publish(owner, 'rocket', [
      { version: '1.0.0', dependencies: ['base^1'] },
      { version: '2.0.0', dependencies: ['fuel^9'] },
    ]);
    await publish(owner, 'fuel', [{ version: '1.0.0' }]);
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['rocket'] });
    expect(response.body.success).toBe(true);
    expect(response.body.resolved.rocket.version).toBe('1.0.0');
  });

  it('skips versions whose toolbox range excludes the host', async () => {
    await publish(owner, 'hosted', [
      { version: '1.0.0', toolbox: '>=1.0.0 <2.0.0' },
      { version: '2.0.0', toolbox: '>=2.0.0' },
    ]);
    const old = await registry.api.post('/api/v1/resolve', { requirements: ['hosted'], toolbox_version: '1.5' });
    expect(old.body.resolved.hosted.version).toBe('1.0.0');
    const current = await registry.api.post('/api/v1/resolve', { requirements: ['hosted'], toolbox_version: '2.1.0' });
    expect(current.body.resolved.hosted.version).toBe('2.0.0');
  });

  it('reports a conflict when no version supports the host', async () => {
    const response = await registry.api.post('/api/v1/resolve', {
      requirements: ['hosted>=2'],
      toolbox_version: '1.0.0',
    });
    expect(response.body.success).toBe(false);
    expect(response.body.conflicts.join('\n')).toMatch(/supports toolbox 1\.0\.0/);
  });

  it('skips yanked versions, unless pinned exactly, which warns', async () => {
    await publish(owner, 'shaky', [{ version: '1.0.0' }, { version: '1.1.0' }]);
    expect((await owner.post('/api/v1/packages/shaky/versions/1.1.0/yank', { reason: 'corrupt' })).status).toBe(200);
    const ranged = await registry.api.post('/api/v1/resolve', { requirements: ['shaky^1'] });
    expect(ranged.body.resolved.shaky.version).toBe('1.0.0');
    expect(ranged.body.warnings).toEqual([]);
    const pinned = await registry.api.post('/api/v1/resolve', { requirements: ['shaky==1.1.0'] });
    expect(pinned.body.resolved.shaky.version).toBe('1.1.0');
    expect(pinned.body.warnings.join('\n')).toMatch(/shaky 1\.1\.0 is yanked \(corrupt\)/);
  });

  it('offers prereleases only when the range names one', async () => {
    await publish(owner, 'edge', [{ version: '1.0.0' }, { version: '1.1.0-beta.1' }]);
    const plain = await registry.api.post('/api/v1/resolve', { requirements: ['edge'] });
    expect(plain.body.resolved.edge.version).toBe('1.0.0');
    const opted = await registry.api.post('/api/v1/resolve', { requirements: ['edge>=1.1.0-beta.0'] });
    expect(opted.body.resolved.edge.version).toBe('1.1.0-beta.1');
  });

  it('terminates on a dependency cycle and reports it as a warning', async () => {
    await publish(owner, 'yin', [{ version: '1.0.0', dependencies: ['yang^1'] }]);
    await publish(owner, 'yang', [{ version: '1.0.0', dependencies: ['yin^1'] }]);
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['yin'] });
    expect(response.body.success).toBe(true);
    expect(response.body.warnings.join('\n')).toMatch(/cycle: yin 1\.0\.0 -> yang 1\.0\.0 -> yin/);
  });

  it('treats names case-insensitively and answers with the stored spelling', async () => {
    const response = await registry.api.post('/api/v1/resolve', { requirements: ['cloudm==2.0.0', 'LIBCORE'] });
    expect(response.body.success).toBe(true);
    expect(Object.keys(response.body.resolved).sort()).toEqual(['CloudM', 'LibCore', 'base']);
  });

  it('reads a dependency graph ahead of the resolver, one query per level of the graph', async () => {
    await publish(owner, 'wave-leaf', [{ version: '1.0.0' }, { version: '1.1.0' }]);
    for (const name of ['wave-b1', 'wave-b2', 'wave-b3'])
      await publish(owner, name, [{ version: '1.0.0', dependencies: ['wave-leaf^1'] }]);
    await publish(owner, 'wave-a1', [{ version: '1.0.0', dependencies: ['wave-b1^1', 'WAVE-B2^1'] }]);
    await publish(owner, 'wave-a2', [{ version: '1.0.0', dependencies: ['wave-b2^1', 'wave-b3^1', 'wave-private^1'] }]);
    await publish(owner, 'wave-private', [{ version: '1.0.0' }], { visibility: 'private' });
    await publish(owner, 'wave-root', [{ version: '1.0.0', dependencies: ['wave-a1^1', 'wave-a2^1'] }]);

    // Every statement the registry runs while it answers, through the query runners of its data source.
    const runner = Object.getPrototypeOf(registry.app.get(DataSource).createQueryRunner()) as {
      query: (...args: unknown[]) => Promise<unknown>;
    };
    const query = runner.query;
    const statements: string[] = [];
    runner.query = function (this: unknown, ...args: unknown[]) {
      statements.push(String(args[0]));
      return query.apply(this, args);
    };
    const mine = await owner.post('/api/v1/resolve', { requirements: ['wave-root'] }).finally(() => {
      runner.query = query;
    });
    // Packages by name and versions by package, in one statement per level: root, then a1/a2, then b1–b3 and
    // wave-private, then wave-leaf. (Other statements, such as the delta jobs the uploads queued, look up one id.)
    const lookups = statements.filter((statement) => /\b(name_lower|package_id)\W*\s+IN\s*\(/.test(statement));
    expect(lookups).toHaveLength(4);
    expect(mine.body.success).toBe(true);
    expect(Object.keys(mine.body.resolved).sort()).toEqual([
      'wave-a1',
      'wave-a2',
      'wave-b1',
      'wave-b2',
      'wave-b3',
      'wave-leaf',
      'wave-private',
      'wave-root',
    ]);
    expect(mine.body.resolved['wave-leaf'].version).toBe('1.1.0');
    const anonymous = await registry.api.post('/api/v1/resolve', { requirements: ['wave-root'] });
    // Read ahead or not, what the caller may not read stays unknown to it.
    expect(anonymous.body.success).toBe(false);
    expect(anonymous.body.conflicts.join('\n')).toMatch(/unknown package wave-private/);
  });

  it('resolves private packages for their publisher only', async () => {
    await publish(owner, 'secret-sauce', [{ version: '1.0.0' }], { visibility: 'private' });
    const anonymous = await registry.api.post('/api/v1/resolve', { requirements: ['secret-sauce'] });
    expect(anonymous.body.success).toBe(false);
    expect(anonymous.body.conflicts[0]).toMatch(/unknown package secret-sauce/);
    const mine = await owner.post('/api/v1/resolve', { requirements: ['secret-sauce'] });
    expect(mine.body.resolved['secret-sauce'].version).toBe('1.0.0');
  });

  describe('check compatibility', () => {
    it('says a version with its dependencies installs on a host', async () => {
      const response = await registry.api.get(
        '/api/v1/resolve/check?package=CloudM&version=2.1.0&toolbox_version=1.5.0',
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        compatible: true,
        reason: null,
        package: 'CloudM',
        version: '2.1.0',
        warnings: [],
        conflicts: [],
      });
      expect(response.body.dependencies).toEqual({ LibCore: '1.3.0', base: '1.4.2' });
    });

    it('says why a version does not support the host', async () => {
      const response = await registry.api.post('/api/v1/resolve/check', {
        package: 'hosted',
        version: '2.0.0',
        toolbox_version: '1.5.0',
      });
      expect(response.status).toBe(200);
      expect(response.body.compatible).toBe(false);
      expect(response.body.reason).toBe('hosted 2.0.0 requires toolbox >=2.0.0, not 1.5.0');
    });

    it('fails a version whose dependencies cannot be met on the host', async () => {
      await publish(owner, 'needs-new-host', [{ version: '1.0.0', dependencies: ['hosted>=2'] }]);
      const response = await registry.api.get('/api/v1/resolve/check?package=needs-new-host&toolbox_version=1.5.0');
      expect(response.body).toMatchObject({ compatible: false, version: '1.0.0' });
      expect(response.body.conflicts.length).toBeGreaterThan(0);
    });

    it('checks the latest version when none is given', async () => {
      const response = await registry.api.get('/api/v1/resolve/check?package=base');
      expect(response.body).toMatchObject({ compatible: true, version: '2.0.0' });
    });

    it('answers 404 for an unknown package or version', async () => {
      expect((await registry.api.get('/api/v1/resolve/check?package=ghost')).status).toBe(404);
      expect((await registry.api.get('/api/v1/resolve/check?package=base&version=9.9.9')).status).toBe(404);
    });

    it('answers 400 without a package or with a malformed toolbox_version', async () => {
      expect((await registry.api.get('/api/v1/resolve/check')).status).toBe(400);
      expect((await registry.api.get('/api/v1/resolve/check?package=base&toolbox_version=soon')).status).toBe(400);
    });
  });
});
