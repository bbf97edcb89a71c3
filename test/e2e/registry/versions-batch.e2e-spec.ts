import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';

describe.each(backends())('batch latest versions on $name', (backend) => {
  let registry: RegistryUnderTest;
  let owner: ApiClient;

  beforeAll(async () => {
    registry = await startRegistry(backend);
    ({ client: owner } = await publisherFactory(registry));
    await createPackage(owner, 'CloudM');
    for (const version of ['1.0.0', '1.2.0', '2.0.0-beta.1'])
      expect((await uploadVersion(owner, 'CloudM', version)).status).toBe(201);
    await createPackage(owner, 'empty-lib');
    await createPackage(owner, 'half-yanked');
    for (const version of ['1.0.0', '1.1.0'])
      expect((await uploadVersion(owner, 'half-yanked', version)).status).toBe(201);
    expect((await owner.post('/api/v1/packages/half-yanked/versions/1.1.0/yank', { reason: 'broken' })).status).toBe(
      200,
    );
    await createPackage(owner, 'all-yanked');
    expect((await uploadVersion(owner, 'all-yanked', '1.0.0')).status).toBe(201);
    expect((await owner.post('/api/v1/packages/all-yanked/versions/1.0.0/yank', {})).status).toBe(200);
    await createPackage(owner, 'private-tool', { visibility: 'private' });
    expect((await uploadVersion(owner, 'private-tool', '3.0.0')).status).toBe(201);
    await createPackage(owner, 'unlisted-tool', { visibility: 'unlisted' });
    expect((await uploadVersion(owner, 'unlisted-tool', '0.5.0')).status).toBe(201);
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('answers repeated names with the latest release of each', async () => {
    const response = await registry.api.get('/api/v1/versions?names=CloudM&names=half-yanked');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ versions: { CloudM: '1.2.0', 'half-yanked': '1.0.0' } });
  });

  it('accepts comma-separated names, also mixed with repeated ones', async () => {
    const response = await registry.api.get('/api/v1/versions?names=CloudM,empty-lib&names=all-yanked');
    expect(response.body.versions).toEqual({ CloudM: '1.2.0', 'empty-lib': null, 'all-yanked': null });
  });

  it('matches names case-insensitively and keys the answer by the name as sent', async () => {
    const response = await registry.api.get('/api/v1/versions?names=cloudm&names=CLOUDM');
    expect(response.body.versions).toEqual({ cloudm: '1.2.0', CLOUDM: '1.2.0' });
  });

  it('leaves unknown names and names that are not package names out', async () => {
    const response = await registry.api.get(
      `/api/v1/versions?names=nope&names=${encodeURIComponent('../etc')}&names=CloudM`,
    );
    expect(response.body.versions).toEqual({ CloudM: '1.2.0' });
  });

  it('never reports a yanked version: null when every version is yanked, else the best other one', async () => {
    const response = await registry.api.post('/api/v1/versions', { names: ['all-yanked', 'half-yanked'] });
    expect(response.body.versions).toEqual({ 'all-yanked': null, 'half-yanked': '1.0.0' });
  });

  it('hides private packages from other callers and shows them to their publisher', async () => {
    expect((await registry.api.get('/api/v1/versions?names=private-tool')).body.versions).toEqual({});
    const stranger = (await publisherFactory(registry)).client;
    expect((await stranger.get('/api/v1/versions?names=private-tool')).body.versions).toEqual({});
    expect((await owner.get('/api/v1/versions?names=private-tool')).body.versions).toEqual({ 'private-tool': '3.0.0' });
  });

  it('answers unlisted packages by name to signed-in callers only', async () => {
    expect((await registry.api.get('/api/v1/versions?names=unlisted-tool')).body.versions).toEqual({});
    const stranger = (await publisherFactory(registry)).client;
    expect((await stranger.get('/api/v1/versions?names=unlisted-tool')).body.versions).toEqual({
      'unlisted-tool': '0.5.0',
    });
  });

  it('takes long lists by POST', async () => {
    const many = Array.from({ length: 999 }, (_, index) => `missing-${index}`);
    const response = await registry.api.post('/api/v1/versions', { names: [...many, 'CloudM'] });
    expect(response.status).toBe(200);
    expect(response.body.versions).toEqual({ CloudM: '1.2.0' });
  });

  it('refuses more than 1,000 names: 422 by POST, 400 by GET', async () => {
    const names = Array.from({ length: 1001 }, (_, index) => `n${index}`);
    const posted = await registry.api.post('/api/v1/versions', { names });
    expect(posted.status).toBe(422);
    expect(posted.body.errors[0].field).toBe('names');
    const got = await registry.api.get(`/api/v1/versions?names=${names.join(',')}`);
    expect(got.status).toBe(400);
  });

  it('refuses a POST whose names are not strings with 422', async () => {
    const response = await registry.api.post('/api/v1/versions', { names: [1, 2] });
    expect(response.status).toBe(422);
  });

  it('lists every listable package, paged, when no names are given', async () => {
    const first = await registry.api.get('/api/v1/versions?per_page=2&page=1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 4, page: 1, per_page: 2 });
    const second = await registry.api.get('/api/v1/versions?per_page=2&page=2');
    expect({ ...first.body.versions, ...second.body.versions }).toEqual({
      'all-yanked': null,
      CloudM: '1.2.0',
      'empty-lib': null,
      'half-yanked': '1.0.0',
    });
  });

  it('refuses per_page above 1,000 with 400', async () => {
    const response = await registry.api.get('/api/v1/versions?per_page=1001');
    expect(response.status).toBe(400);
  });

  it('sends an ETag and answers a matching If-None-Match with 304', async () => {
    const first = await registry.api.get('/api/v1/versions?names=CloudM');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const again = await registry.api.get('/api/v1/versions?names=CloudM', { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    const posted = await registry.api.post('/api/v1/versions', { names: ['CloudM'] }, { 'if-none-match': `W/${etag}` });
    expect(posted.status).toBe(304);
  });

  it('changes the ETag when a new version is published', async () => {
    await createPackage(owner, 'moving');
    expect((await uploadVersion(owner, 'moving', '1.0.0')).status).toBe(201);
    const before = await registry.api.get('/api/v1/versions?names=moving');
    expect((await uploadVersion(owner, 'moving', '1.1.0')).status).toBe(201);
    const after = await registry.api.get('/api/v1/versions?names=moving', {
      'if-none-match': before.headers.get('etag')!,
    });
    expect(after.status).toBe(200);
    expect(after.body.versions).toEqual({ moving: '1.1.0' });
  });
});
