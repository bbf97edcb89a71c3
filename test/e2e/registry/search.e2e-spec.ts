import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PackageEntity } from '../../../src/modules/registry/entities/package.entity.js';
import { PublishersService } from '../../../src/modules/registry/publishers.service.js';
import { SEARCH_ENGINE, type SearchEngine } from '../../../src/modules/search/engines/search-engine.js';
import { SearchIndexService } from '../../../src/modules/search/search-index.service.js';
import type { ApiClient } from '../../support/api-client.js';
import { backends, type Backend } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { GROONGA_BIN, startGroonga, type GroongaUnderTest } from '../../support/groonga-server.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN, createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';

type Item = { name: string; verified: boolean };
const names = (body: { results: Item[] }) => body.results.map((item) => item.name);

/** Each backend with the database's own engine, and (TEST_GROONGA_BIN) with a dedicated Groonga server. */
const cases: Array<{ name: string; backend: Backend; groonga: boolean }> = [
  ...backends().map((backend) => ({ name: backend.name, backend, groonga: false })),
  ...(GROONGA_BIN
    ? backends().map((backend) => ({ name: `${backend.name} with a Groonga server`, backend, groonga: true }))
    : []),
];

describe.each(cases)('search on $name', ({ backend, groonga }) => {
  let registry: RegistryUnderTest;
  let owner: ApiClient;
  let publisherName: string;
  let server: GroongaUnderTest | null = null;

  beforeAll(async () => {
    if (groonga) server = await startGroonga();
    registry = await startRegistry(backend, server ? { SEARCH_ENGINE: 'groonga', SEARCH_GROONGA_URL: server.url } : {});
    ({ client: owner, publisherName } = await publisherFactory(registry));
  });

  afterAll(async () => {
    await registry?.close();
    await server?.stop();
  });

  /** Serves a version's file `times` times and waits for the counter to show it. */
  async function download(name: string, version: string, times: number): Promise<void> {
    for (let index = 0; index < times; index += 1) {
      const response = await registry.api.get(`/api/v1/packages/${name}/versions/${version}`);
      expect(response.status).toBe(200);
    }
    for (let attempt = 0; attempt < 50; attempt += 1) {
      if ((await registry.api.get(`/api/v1/packages/${name}`)).body.total_downloads >= times) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`downloads of ${name} were not counted`);
  }

  it('answers with results and packages as the same array, plus total, query and paging', async () => {
    await createPackage(owner, 'Aurora', {
      display_name: 'Aurora Lights',
      description: 'Renders borealis shaders',
      keywords: ['graphics'],
    });
    const response = await registry.api.get('/api/v1/search?q=borealis');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 1, query: 'borealis', page: 1, per_page: 20 });
    expect(response.body.packages).toEqual(response.body.results);
    expect(response.body.results[0]).toMatchObject({
      name: 'Aurora',
      display_name: 'Aurora Lights',
      description: 'Renders borealis shaders',
      latest_version: null,
      total_downloads: 0,
      downloads: 0,
      package_type: 'mod',
      visibility: 'public',
      publisher: { name: publisherName, verified: false },
      verified: false,
    });
  });

  it('ranks the exact name first, then names starting with the query, then text matches', async () => {
    await createPackage(owner, 'windy', { description: 'Blows a zephyr through your files' });
    await createPackage(owner, 'zephyr-tools', { description: 'Tools' });
    await createPackage(owner, 'zephyr', { description: 'The core' });
    const response = await registry.api.get('/api/v1/search?q=Zephyr');
    expect(names(response.body)).toEqual(['zephyr', 'zephyr-tools', 'windy']);
  });

  it('finds packages by display name, keywords and description words, name matches first', async () => {
    await createPackage(owner, 'plain-one', { display_name: 'Marmot Viewer', description: 'x' });
    await createPackage(owner, 'plain-two', { description: 'y', keywords: ['marmot'] });
    await createPackage(owner, 'plain-three', { description: 'A marmot in the description' });
    await createPackage(owner, 'marmot-named', { description: 'z' });
    const response = await registry.api.get('/api/v1/search?q=marmot');
    expect(names(response.body)).toEqual(['marmot-named', 'plain-one', 'plain-two', 'plain-three']);
  });

  it('matches a word prefix, so a partly typed query finds the package', async () => {
    await createPackage(owner, 'pelican-post', { description: 'Delivers quokkalicious messages' });
    const response = await registry.api.get('/api/v1/search?q=quokka');
    expect(names(response.body)).toEqual(['pelican-post']);
  });

  it('finds a hyphenated name typed without its hyphen, also partly', async () => {
    await createPackage(owner, 'kestrel-nest', { description: 'x' });
    expect(names((await registry.api.get('/api/v1/search?q=kestrelnest')).body)).toEqual(['kestrel-nest']);
    expect(names((await registry.api.get('/api/v1/search?q=kestreln')).body)).toEqual(['kestrel-nest']);
  });

  it('finds a package made public again after it was private', async () => {
    await createPackage(owner, 'boomerang-bat', { description: 'returnish', visibility: 'private' });
    expect((await registry.api.get('/api/v1/search?q=returnish')).body.total).toBe(0);
    expect((await owner.patch('/api/v1/packages/boomerang-bat', { visibility: 'public' })).status).toBe(200);
    expect(names((await registry.api.get('/api/v1/search?q=returnish')).body)).toEqual(['boomerang-bat']);
  });

  it('ranks packages that match more query words higher', async () => {
    await createPackage(owner, 'ember-one', { description: 'glacier only' });
    await createPackage(owner, 'ember-two', { description: 'glacier and tundra together' });
    const response = await registry.api.get('/api/v1/search?q=glacier%20tundra');
    expect(names(response.body)).toEqual(['ember-two', 'ember-one']);
  });

  it('ignores accents and case in text', async () => {
    await createPackage(owner, 'bistro', { description: 'A CAFÉ menu manager' });
    const response = await registry.api.get('/api/v1/search?q=cafe');
    expect(names(response.body)).toContain('bistro');
  });

  it('finds a hyphenated name as typed, exact match first', async () => {
    await createPackage(owner, 'my-mod', { description: 'first' });
    await createPackage(owner, 'my-mod-extra', { description: 'second' });
    const response = await registry.api.get('/api/v1/search?q=my-mod');
    expect(response.status).toBe(200);
    expect(names(response.body).slice(0, 2)).toEqual(['my-mod', 'my-mod-extra']);
  });

  it('boosts packages of verified publishers among equally relevant ones', async () => {
    const verified = await publisherFactory(registry);
    await createPackage(owner, 'quasar-alpha', { description: 'nebulous thing' });
    await createPackage(verified.client, 'quasar-beta', { description: 'nebulous thing' });
    const before = await registry.api.get('/api/v1/search?q=nebulous');
    expect(names(before.body)).toEqual(['quasar-alpha', 'quasar-beta']);
    const publisher = await registry.app.get(PublishersService).findByNameOrId(verified.publisherName);
    await registry.app.get(PublishersService).setStatus(publisher!.id, 'verified');
    const after = await registry.api.get('/api/v1/search?q=nebulous');
    expect(names(after.body)).toEqual(['quasar-beta', 'quasar-alpha']);
    expect(after.body.results[0].verified).toBe(true);
  });

  it('blends downloads into the ranking of equally relevant packages', async () => {
    await createPackage(owner, 'dune-a', { description: 'sandworm helper' });
    await createPackage(owner, 'dune-b', { description: 'sandworm helper' });
    expect((await uploadVersion(owner, 'dune-b', '1.0.0')).status).toBe(201);
    await download('dune-b', '1.0.0', 10);
    const response = await registry.api.get('/api/v1/search?q=sandworm');
    expect(names(response.body)).toEqual(['dune-b', 'dune-a']);
    expect(response.body.results[0].total_downloads).toBe(10);
  });

  it('hides private and unlisted packages from anonymous callers', async () => {
    await createPackage(owner, 'secret-walrus', { description: 'walrusy', visibility: 'private' });
    await createPackage(owner, 'hidden-walrus', { description: 'walrusy', visibility: 'unlisted' });
    await createPackage(owner, 'open-walrus', { description: 'walrusy' });
    const response = await registry.api.get('/api/v1/search?q=walrusy');
    expect(names(response.body)).toEqual(['open-walrus']);
    expect(response.body.total).toBe(1);
  });

  it("shows an authenticated caller its own publisher's private packages, but never unlisted ones", async () => {
    const response = await owner.get('/api/v1/search?q=walrusy');
    expect(names(response.body).sort()).toEqual(['open-walrus', 'secret-walrus']);
    const stranger = (await publisherFactory(registry)).client;
    expect(names((await stranger.get('/api/v1/search?q=walrusy')).body)).toEqual(['open-walrus']);
  });

  it('finds the new description and forgets the old one after an update', async () => {
    await createPackage(owner, 'chameleon', { description: 'old crimson words' });
    expect((await owner.patch('/api/v1/packages/chameleon', { description: 'new viridian words' })).status).toBe(200);
    expect(names((await registry.api.get('/api/v1/search?q=viridian')).body)).toEqual(['chameleon']);
    expect((await registry.api.get('/api/v1/search?q=crimson')).body.total).toBe(0);
  });

  it('stops showing a package to anonymous callers once it is made private', async () => {
    await createPackage(owner, 'fading-lynx', { description: 'lynxish' });
    expect(names((await registry.api.get('/api/v1/search?q=lynxish')).body)).toEqual(['fading-lynx']);
    expect((await owner.patch('/api/v1/packages/fading-lynx', { visibility: 'private' })).status).toBe(200);
    expect((await registry.api.get('/api/v1/search?q=lynxish')).body.results).toEqual([]);
  });

  it('forgets a deleted package', async () => {
    await createPackage(owner, 'doomed-dodo', { description: 'dodoish' });
    expect((await registry.as(ADMIN).delete('/api/v1/packages/doomed-dodo')).status).toBe(204);
    const response = await registry.api.get('/api/v1/search?q=dodoish');
    expect(response.body).toMatchObject({ results: [], total: 0 });
  });

  it('filters by package_type', async () => {
    await createPackage(owner, 'ocelot-theme', { description: 'ocelotty', package_type: 'theme' });
    await createPackage(owner, 'ocelot-lib', { description: 'ocelotty', package_type: 'library' });
    const response = await registry.api.get('/api/v1/search?q=ocelotty&package_type=theme');
    expect(names(response.body)).toEqual(['ocelot-theme']);
  });

  it('pages through results with a total of all matches', async () => {
    for (const suffix of ['a', 'b', 'c']) await createPackage(owner, `heron-${suffix}`, { description: 'heronic' });
    const first = await registry.api.get('/api/v1/search?q=heronic&per_page=2&page=1');
    const second = await registry.api.get('/api/v1/search?q=heronic&per_page=2&page=2');
    const beyond = await registry.api.get('/api/v1/search?q=heronic&per_page=2&page=5');
    expect(first.body).toMatchObject({ total: 3, per_page: 2, page: 1 });
    expect([...names(first.body), ...names(second.body)].sort()).toEqual(['heron-a', 'heron-b', 'heron-c']);
    expect(beyond.body).toMatchObject({ results: [], total: 3 });
  });

  it('lists every visible package, most downloaded first, for an empty query', async () => {
    const { client } = await publisherFactory(registry);
    await createPackage(client, 'popular-kiwi', { package_type: 'plugin' });
    await createPackage(client, 'quiet-kiwi', { package_type: 'plugin' });
    await createPackage(client, 'private-kiwi', { package_type: 'plugin', visibility: 'private' });
    expect((await uploadVersion(client, 'popular-kiwi', '1.0.0')).status).toBe(201);
    await download('popular-kiwi', '1.0.0', 3);
    const response = await registry.api.get('/api/v1/search?q=&package_type=plugin');
    expect(response.body).toMatchObject({ total: 2, query: '' });
    expect(names(response.body)).toEqual(['popular-kiwi', 'quiet-kiwi']);
    expect((await registry.api.get('/api/v1/search')).body.total).toBeGreaterThan(10);
  });

  it.each([
    ['a double quote', '"'],
    ['unbalanced quotes', '"cloud'],
    ['FTS operators', 'cloud AND NOT storage OR NEAR(a b)'],
    ['a star', '*'],
    ['a leading minus', '-cloud'],
    ['SQL punctuation', "'; DROP TABLE packages; --"],
    ['LIKE wildcards', '%_%'],
    ['a backslash', '\\'],
    ['brackets and colons', '(name:cloud) [x] {y} ^2 ~1'],
    ['unicode', 'ünïcödé 日本語 🚀'],
    ['only stop words', 'the and of'],
    ['1,000 characters', 'cloud '.repeat(166) + 'abcd'],
    ['1,000 characters without spaces', 'x'.repeat(1000)],
  ])('answers %s safely with 200', async (_label, q) => {
    const response = await registry.api.get(`/api/v1/search?q=${encodeURIComponent(q)}`);
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.results)).toBe(true);
    expect(response.body.query).toBe(q);
  });

  it('refuses a query over the documented 1,000 characters with 422', async () => {
    const response = await registry.api.get(`/api/v1/search?q=${'x'.repeat(1001)}`);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('UNPROCESSABLE_ENTITY');
  });

  it.each(['per_page=0', 'per_page=101', 'page=0', 'package_type=spaceship'])(
    'rejects %s with 400',
    async (parameter) => {
      const response = await registry.api.get(`/api/v1/search?q=x&${parameter}`);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
    },
  );

  if (groonga)
    it('catches up at start-up with what changed while the Groonga server missed it', async () => {
      await createPackage(owner, 'catch-up-kept', { display_name: 'Catchup Kept' });
      // Indexed after the registry's commit, by its event listener.
      const indexed = await eventually(
        async () => names((await registry.api.get('/api/v1/search?q=catchup')).body),
        (found) => found.length > 0,
      );
      expect(indexed).toEqual(['catch-up-kept']);
      const engine = registry.app.get<SearchEngine>(SEARCH_ENGINE);
      // The server lost one document and holds one of a package that no longer exists.
      const kept = await registry.app
        .get(DataSource)
        .getRepository(PackageEntity)
        .findOneByOrFail({ name: 'catch-up-kept' });
      await engine.remove(kept.id);
      const orphan = randomUUID();
      await engine.upsert([
        {
          packageId: orphan,
          name: 'catch-up-orphan',
          displayName: 'Catchup Orphan',
          description: null,
          keywords: null,
          visibility: 'public',
          publisherId: randomUUID(),
          packageType: 'mod',
          totalDownloads: 0,
          verified: false,
        },
      ]);
      expect(names((await registry.api.get('/api/v1/search?q=catchup')).body)).not.toContain('catch-up-kept');
      expect(await engine.documentIds?.()).toContain(orphan);

      await registry.app.get(SearchIndexService).onApplicationBootstrap();
      const after = await registry.api.get('/api/v1/search?q=catchup');
      expect(names(after.body)).toEqual(['catch-up-kept']);
      expect(after.body.total).toBe(1);
      expect(await engine.documentIds?.()).not.toContain(orphan);
    });

  describe('suggestions', () => {
    it('completes a name prefix', async () => {
      await createPackage(owner, 'searchable', { description: 'find me' });
      const response = await registry.api.get('/api/v1/search/suggest?q=sea');
      expect(response.status).toBe(200);
      expect(response.body).toContain('searchable');
    });

    it('puts whole-name prefixes before names with a word that starts with it', async () => {
      await createPackage(owner, 'the-tapir-kit', { description: 'x' });
      await createPackage(owner, 'tapir', { description: 'x' });
      const response = await registry.api.get('/api/v1/search/suggestions?q=tapi');
      expect(response.body).toEqual(['tapir', 'the-tapir-kit']);
    });

    it('limits the answer, 5 by default', async () => {
      for (let index = 0; index < 7; index += 1) await createPackage(owner, `gecko${index}`, { description: 'x' });
      expect((await registry.api.get('/api/v1/search/suggest?q=gecko')).body).toHaveLength(5);
      expect((await registry.api.get('/api/v1/search/suggest?q=gecko&limit=2')).body).toHaveLength(2);
    });

    it('never suggests packages the caller cannot list', async () => {
      await createPackage(owner, 'yakhidden', { visibility: 'private' });
      await createPackage(owner, 'yakunlisted', { visibility: 'unlisted' });
      expect((await registry.api.get('/api/v1/search/suggest?q=yak')).body).toEqual([]);
      expect((await owner.get('/api/v1/search/suggest?q=yak')).body).toEqual(['yakhidden']);
    });

    it.each(['limit=0', 'limit=21', 'limit=x'])('rejects %s with 400', async (parameter) => {
      const response = await registry.api.get(`/api/v1/search/suggest?q=a&${parameter}`);
      expect(response.status).toBe(400);
    });

    it.each(['', '"', '%', '日本', '-'])('answers the prefix %j with an array', async (q) => {
      const response = await registry.api.get(`/api/v1/search/suggest?q=${encodeURIComponent(q)}`);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
    });
  });
});
