import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { GROONGA_BIN, startGroonga, type GroongaUnderTest } from '../../../../test/support/groonga-server.js';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { downloadsAboveBoost, nameWords, parseQuery } from '../search-terms.js';
import { createSearchEngine, type MroongaRanking } from './create-search-engine.js';
import { referenceRanking } from './reference-ranking.js';
import type { EngineQuery, SearchDocument, SearchEngine } from './search-engine.js';

/**
 * One contract for every SearchEngine: SQLite FTS5 and, when TEST_MYSQL_URL is set, MySQL/MariaDB with
 * the documents table on Mroonga (when the server has it) and forced to InnoDB FULLTEXT
 * (SEARCH_MYSQL_ENGINE=innodb at migration time); on Mroonga both ranked inside Groonga (mroonga_command
 * select, the default) and in SQL (SEARCH_MROONGA_RANKING=sql); and, when TEST_GROONGA_BIN is set, a dedicated
 * Groonga server (SEARCH_ENGINE=groonga). A configured backend that cannot be reached fails.
 * The oracle of every ranking is referenceRanking: the same rules computed in JS over the documents.
 */
interface EngineBackend {
  open(): Promise<{ engine: SearchEngine; dataSource: DataSource }>;
  dispose(): Promise<void>;
}

function sqliteBackend(): EngineBackend {
  const file = join(tmpdir(), `tb-search-${randomBytes(6).toString('hex')}.sqlite`);
  let dataSource: DataSource | null = null;
  return {
    async open() {
      dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: file }));
      await dataSource.initialize();
      await dataSource.runMigrations();
      return { engine: await createSearchEngine(dataSource), dataSource };
    },
    async dispose() {
      await dataSource?.destroy();
      await rm(file, { force: true });
    },
  };
}

function mysqlBackend(
  mysqlUrl: string,
  engineSetting: 'auto' | 'innodb',
  mroongaRanking: MroongaRanking = 'groonga',
): EngineBackend {
  const base = new URL(mysqlUrl);
  const database = `${base.pathname.replace(/^\//, '') || 'toolbox_test'}_search_${randomBytes(4).toString('hex')}`;
  const server = `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`;
  let dataSource: DataSource | null = null;
  return {
    async open() {
      const admin = await createConnection({ uri: server });
      await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      await admin.end();
      const url = new URL(mysqlUrl);
      url.pathname = `/${database}`;
      dataSource = new DataSource(
        createDataSourceOptions({ type: 'mysql', location: url.toString(), searchMysqlEngine: engineSetting }),
      );
      await dataSource.initialize();
      await dataSource.runMigrations();
      return { engine: await createSearchEngine(dataSource, { mroongaRanking }), dataSource };
    },
    async dispose() {
      await dataSource?.destroy();
      const admin = await createConnection({ uri: server });
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    },
  };
}

/** A real Groonga server on a new database; the registry's database is not needed by the engine itself. */
function groongaServerBackend(binary: string): EngineBackend {
  let server: GroongaUnderTest | null = null;
  return {
    async open() {
      server = await startGroonga(binary);
      const dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: ':memory:' }));
      return {
        engine: await createSearchEngine(dataSource, { engine: 'groonga', groongaUrl: server.url }),
        dataSource,
      };
    },
    async dispose() {
      await server?.stop();
    },
  };
}

const backends: Array<[string, () => EngineBackend]> = [['SQLite FTS5', sqliteBackend]];
if (GROONGA_BIN) backends.push(['Groonga server', () => groongaServerBackend(GROONGA_BIN as string)]);
if (process.env.TEST_MYSQL_URL) {
  const url = process.env.TEST_MYSQL_URL;
  backends.push(['MySQL (Mroonga ranked by Groonga when available)', () => mysqlBackend(url, 'auto')]);
  backends.push(['MySQL (Mroonga ranked in SQL when available)', () => mysqlBackend(url, 'auto', 'sql')]);
  backends.push(['MySQL forced to InnoDB', () => mysqlBackend(url, 'innodb')]);
}

const OWNER = randomUUID();
const OTHER = randomUUID();

function doc(name: string, fields: Partial<SearchDocument> = {}): SearchDocument {
  return {
    packageId: randomUUID(),
    name,
    displayName: null,
    description: null,
    keywords: null,
    visibility: 'public',
    publisherId: OWNER,
    packageType: 'mod',
    totalDownloads: 0,
    verified: false,
    ...fields,
  };
}

/** Filler packages, so that no word of a test is held by most documents (InnoDB's IDF is then 0). */
const FILLER = Array.from({ length: 40 }, (_, index) =>
  doc(`filler-package-${index}`, {
    displayName: `Filler Tool ${index}`,
    description: `ordinary helper text number ${index}`,
    keywords: ['filler'],
    totalDownloads: index * 37,
  }),
);

describe.each(backends)('SearchEngine contract: %s', (_name, createBackend) => {
  const backend = createBackend();
  let engine: SearchEngine;
  /** The test's own record of what was indexed: the oracle's input. */
  const indexed = new Map<string, SearchDocument>();

  async function put(...documents: SearchDocument[]): Promise<SearchDocument[]> {
    await engine.upsert(documents);
    for (const document of documents) indexed.set(document.packageId, document);
    return documents;
  }

  function request(text: string, extra: Partial<EngineQuery> = {}): EngineQuery {
    const parsed = parseQuery(text);
    return { terms: parsed.terms, name: parsed.name, viewerPublisherId: null, offset: 0, limit: 100, ...extra };
  }

  async function names(text: string, extra: Partial<EngineQuery> = {}): Promise<string[]> {
    const { ids } = await engine.search(request(text, extra));
    return ids.map((id) => indexed.get(id)?.name ?? `unknown ${id}`);
  }

  async function expected(query: EngineQuery): Promise<string[]> {
    return referenceRanking([...indexed.values()], await engine.matchRelevance(query.terms), query);
  }

  beforeAll(async () => {
    ({ engine } = await backend.open());
    await put(...FILLER);
  }, 60_000);
  afterAll(() => backend.dispose());

  it('ranks the exact name first, then names starting with the query, then text matches', async () => {
    await put(
      doc('windy', { description: 'blows a zephyr through your files' }),
      doc('zephyr-tools', { description: 'tools' }),
      doc('zephyr', { description: 'the core' }),
    );
    expect(await names('Zephyr')).toEqual(['zephyr', 'zephyr-tools', 'windy']);
  });

  it('weighs the name over the display name over keywords over the description', async () => {
    await put(
      doc('plain-four', { description: 'marmot' }),
      doc('plain-three', { keywords: ['marmot'] }),
      doc('plain-two', { displayName: 'Marmot' }),
      doc('marmot-named'),
    );
    expect(await names('marmot')).toEqual(['marmot-named', 'plain-two', 'plain-three', 'plain-four']);
  });

  it('counts the joined words of a name as the name', async () => {
    const [joined] = await put(doc('my-cloudsync-kit'), doc('other-kit', { description: 'mycloudsynckit' }));
    const { ids } = await engine.search(request('mycloudsynckit'));
    expect(ids[0]).toBe(joined.packageId);
    expect(await names('mycloudsy')).toContain('my-cloudsync-kit');
  });

  it('ignores accents and case', async () => {
    await put(doc('bistro-tool', { description: 'A CAFÉ menu' }), doc('bakery-tool', { description: 'cafe menus' }));
    expect((await names('Café')).sort()).toEqual(['bakery-tool', 'bistro-tool']);
    expect((await names('cafe')).sort()).toEqual(['bakery-tool', 'bistro-tool']);
  });

  it('reads only the last word as a prefix, and a one-letter last word as a whole word', async () => {
    await put(doc('pelican-post', { description: 'delivers quokkalicious messages' }));
    expect(await names('quokka')).toEqual(['pelican-post']);
    expect(await names('quokka delivers')).toEqual(['pelican-post']);
    expect(await names('quokka messag')).toEqual(['pelican-post']);
    expect(await names('quokk zzzword')).toEqual([]);
    await put(doc('letter-kit', { description: 'option v only' }), doc('kit-vendor', { description: 'vendored' }));
    // InnoDB does not index words shorter than innodb_ft_min_token_size (3 by default; docs/search.md).
    expect(await names('v')).toEqual(engine.label.includes('InnoDB') ? [] : ['letter-kit']);
  });

  it("shows public packages to anyone, the viewer's own private ones to it, and unlisted ones to nobody", async () => {
    await put(
      doc('open-walrus', { description: 'walrusy' }),
      doc('hidden-walrus', { description: 'walrusy', visibility: 'private' }),
      doc('shadowed-seal', { description: 'walrusy', visibility: 'unlisted' }),
      doc('foreign-walrus', { description: 'walrusy', visibility: 'private', publisherId: OTHER }),
    );
    expect(await names('walrusy')).toEqual(['open-walrus']);
    expect((await names('walrusy', { viewerPublisherId: OWNER })).sort()).toEqual(['hidden-walrus', 'open-walrus']);
    expect((await names('walrusy', { viewerPublisherId: OTHER })).sort()).toEqual(['foreign-walrus', 'open-walrus']);
    expect(await names('shadowed-seal', { viewerPublisherId: OWNER })).toEqual([]);
    expect((await engine.search(request('walrusy'))).total).toBe(1);
  });

  it("follows a publisher's verification granted and revoked", async () => {
    const publisher = randomUUID();
    await put(
      doc('nebula-plain', { description: 'nebulous', totalDownloads: 100 }),
      doc('nebula-vetted', { description: 'nebulous', totalDownloads: 100, publisherId: publisher }),
    );
    expect(await names('nebulous')).toEqual(['nebula-plain', 'nebula-vetted']);
    await engine.setPublisherVerified(publisher, true);
    for (const document of indexed.values()) if (document.publisherId === publisher) document.verified = true;
    expect(await names('nebulous')).toEqual(['nebula-vetted', 'nebula-plain']);
    await engine.setPublisherVerified(publisher, false);
    for (const document of indexed.values()) if (document.publisherId === publisher) document.verified = false;
    expect(await names('nebulous')).toEqual(['nebula-plain', 'nebula-vetted']);
  });

  it('follows downloads: a popularity step reorders, and downloads break ties', async () => {
    const [first, second] = await put(
      doc('sandworm-a', { description: 'sandworm', totalDownloads: 5 }),
      doc('sandworm-b', { description: 'sandworm', totalDownloads: 4 }),
    );
    expect(await names('sandworm')).toEqual(['sandworm-a', 'sandworm-b']);
    await engine.setDownloads(second.packageId, 5_000);
    second.totalDownloads = 5_000;
    expect(await names('sandworm')).toEqual(['sandworm-b', 'sandworm-a']);
    await engine.setDownloads(first.packageId, 5_001);
    first.totalDownloads = 5_001;
    expect(await names('sandworm')).toEqual(['sandworm-a', 'sandworm-b']);
  });

  it("keeps a verified publisher's factor when its package's downloads change", async () => {
    // The first's multiplier is 12 × its boost, the second's 10 × a boost between the first's two
    // factors: the order flips if a download count resets the first's verification.
    const downloadsFor = (boost: number) => downloadsAboveBoost(boost - 1);
    const [verified, plain] = await put(
      doc('lemur-verified', { description: 'lemurine', verified: true }),
      doc('lemur-plain', { description: 'lemurine', totalDownloads: downloadsFor(108) }),
    );
    expect(await names('lemurine')).toEqual(['lemur-verified', 'lemur-plain']);
    await engine.setDownloads(verified.packageId, downloadsFor(102));
    verified.totalDownloads = downloadsFor(102);
    expect(await names('lemurine')).toEqual(['lemur-verified', 'lemur-plain']);
    await engine.setDownloads(plain.packageId, downloadsFor(125));
    plain.totalDownloads = downloadsFor(125);
    expect(await names('lemurine')).toEqual(['lemur-plain', 'lemur-verified']);
  });

  it('forgets a removed package and replaces the text of an updated one', async () => {
    const [gone, changed] = await put(
      doc('dodo-bird', { description: 'dodoish' }),
      doc('chameleon', { description: 'crimson' }),
    );
    await engine.remove(gone.packageId);
    indexed.delete(gone.packageId);
    expect(await names('dodoish')).toEqual([]);
    await put({ ...changed, description: 'viridian' });
    expect(await names('crimson')).toEqual([]);
    expect(await names('viridian')).toEqual(['chameleon']);
  });

  it('filters by package type inside the ranking', async () => {
    await put(
      doc('ocelot-mod', { description: 'ocelotty' }),
      doc('ocelot-theme', { description: 'ocelotty', packageType: 'theme' }),
    );
    expect(await names('ocelotty', { packageType: 'theme' })).toEqual(['ocelot-theme']);
    expect((await engine.search(request('ocelotty', { packageType: 'theme' }))).total).toBe(1);
  });

  it('pages through the exact ranking: pages concatenate to it, without duplicates, with one total', async () => {
    await put(
      ...Array.from({ length: 23 }, (_, index) =>
        doc(`heron-${index}`, {
          description: index % 3 === 0 ? 'heronic heronic lake' : 'heronic',
          keywords: index % 4 === 0 ? ['heronic'] : null,
          totalDownloads: (index * 7919) % 1000,
          verified: index % 5 === 0,
        }),
      ),
    );
    const all = await expected(request('heronic'));
    expect(all).toHaveLength(23);
    const pages: string[] = [];
    for (let offset = 0; offset < 30; offset += 4) {
      const page = await engine.search(request('heronic', { offset, limit: 4 }));
      expect(page.total).toBe(23);
      pages.push(...page.ids);
    }
    expect(pages).toEqual(all);
    expect(await engine.search(request('heronic', { offset: 40, limit: 4 }))).toEqual({ ids: [], total: 23 });
  });

  it('answers every query as the reference ranking computed over all documents', async () => {
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    await put(
      ...Array.from({ length: 60 }, (_, index) =>
        doc(`${words[index % 6]}-${words[(index * 5) % 6]}-${index}`, {
          displayName: `${words[(index + 1) % 6]} ${words[(index + 2) % 6]}`,
          description: `${words[(index * 7) % 6]} tooling for ${words[(index * 11) % 6]} and more`,
          keywords: [words[(index * 13) % 6]],
          totalDownloads: (index * 7919) % 100_000,
          verified: index % 7 === 0,
          visibility: index % 9 === 0 ? 'private' : 'public',
          packageType: index % 4 === 0 ? 'theme' : 'mod',
        }),
      ),
    );
    const queries: EngineQuery[] = [
      request('alpha'),
      request('alp'),
      request('alpha bravo'),
      request('bravo charl'),
      request('delta-echo'),
      request('delta-e'),
      request('foxtrot tooling', { viewerPublisherId: OWNER }),
      request('echo', { packageType: 'theme' }),
      request('charlie', { offset: 10, limit: 7 }),
    ];
    for (const query of queries) {
      const reference = await expected(query);
      const page = await engine.search(query);
      expect({ query, ids: page.ids }).toEqual({
        query,
        ids: reference.slice(query.offset, query.offset + query.limit),
      });
      expect(page.total).toBe(reference.length);
    }
  });

  it('suggests whole-name prefixes first, then names with a word that starts with it, by downloads', async () => {
    await put(
      doc('tapir-core', { totalDownloads: 10 }),
      doc('tapir', { totalDownloads: 1 }),
      doc('big-tapirs', { totalDownloads: 1_000 }),
      doc('tapir-secret', { visibility: 'private', totalDownloads: 5 }),
    );
    const suggest = (viewerPublisherId: string | null, limit = 5) =>
      engine.suggest({ name: 'tapi', wordPrefix: 'tapi', viewerPublisherId, limit });
    expect(await suggest(null)).toEqual(['tapir-core', 'tapir', 'big-tapirs']);
    expect(await suggest(OWNER)).toEqual(['tapir-core', 'tapir-secret', 'tapir', 'big-tapirs']);
    expect(await suggest(null, 2)).toEqual(['tapir-core', 'tapir']);
  });

  it('suggests as the oracle over many names, with equal downloads, private and unlisted ones', async () => {
    const stems = ['kiwi-', 'kiwano-', 'ki-', 'fresh-kiwi-', 'kiwi'];
    // Stored in descending name order, so that an engine meeting equal downloads in storage order meets the
    // later name first: the order of equal downloads must come from the names.
    await put(
      ...Array.from({ length: 120 }, (_, index) =>
        doc(`${stems[index % stems.length]}${index}`, {
          // Above every other document here: the most downloaded names of the table.
          totalDownloads: 100_000 + ((index * 7) % 13),
          visibility: index % 9 === 4 ? 'private' : index % 11 === 5 ? 'unlisted' : 'public',
          publisherId: index % 2 === 0 ? OWNER : OTHER,
        }),
      ).sort((a, b) => (a.name < b.name ? 1 : -1)),
    );
    const order = (a: SearchDocument, b: SearchDocument) => {
      const [first, second] = [a.name.toLowerCase(), b.name.toLowerCase()];
      return b.totalDownloads - a.totalDownloads || (first < second ? -1 : first > second ? 1 : 0);
    };
    const oracle = (name: string, word: string | null, viewer: string | null, limit: number) => {
      const visible = [...indexed.values()].filter(
        (document) =>
          document.visibility === 'public' || (document.visibility === 'private' && document.publisherId === viewer),
      );
      const whole = visible.filter((document) => document.name.toLowerCase().startsWith(name)).sort(order);
      const words = word
        ? visible
            .filter(
              (document) =>
                !document.name.toLowerCase().startsWith(name) &&
                nameWords(document.name).some((nameWord) => nameWord.startsWith(word)),
            )
            .sort(order)
        : [];
      return [...whole, ...words].slice(0, limit).map((document) => document.name);
    };
    for (const text of ['kiwi', 'kiwi-', 'ki', 'kiwan', 'fresh-k', 'k'])
      for (const viewer of [null, OWNER])
        for (const limit of [1, 3, 10, 40]) {
          const word = parseQuery(text).terms.at(-1)?.term ?? null;
          const wordPrefix = word && word.length >= 2 ? word : null;
          const expected = oracle(text, wordPrefix, viewer, limit);
          const query = { name: text, wordPrefix, viewerPublisherId: viewer, limit };
          expect({ query, names: await engine.suggest(query) }).toEqual({ query, names: expected });
        }
  });

  it.each([
    ['quotes', `"cloud "sync' ''`],
    ['operators', `+cloud -sync <a >b (c) ~d "e" @f g* NEAR(a b) AND OR NOT`],
    ['column filters', 'name: display_words:x {name}:y ^z'],
    ['SQL', "'; DROP TABLE packages; --"],
    ['unicode', '日本語 😀 Ｃａｆé'],
    ['very long text', 'word '.repeat(199)],
    ['a very long word', 'x'.repeat(1000)],
    ['backslashes', 'cloud\\ \\"sync\\\\ \\'],
    ['Groonga options', "--limit 5 --filter 'true' --cache yes"],
    ['a name-shaped option', '--cache'],
    ['a name of punctuation', '-._'],
    ['Groonga query syntax', 'a:@b c:^d e* -f +g (h OR i) "j k" l:>1 _key:x'],
    ['Groonga script', '") || true || ("'],
    ['newlines and tabs', 'cloud\nsync\r\n--limit 1\t\u0000x'],
  ])('answers hostile text (%s) without an error', async (_label, text) => {
    const page = await engine.search(request(text));
    expect(Array.isArray(page.ids)).toBe(true);
    expect(page.total).toBe((await expected(request(text))).length);
  });
});
