import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { nameWords, parseQuery, rankingMultiplier } from '../search-terms.js';
import { Fts5SearchEngine, fts5Match } from './fts5-search-engine.js';
import { CLASS_SPAN, bm25, clampIdf, decodeAverages, idfRatio, rankKey } from './fts5-ranking.js';
import { referenceRanking } from './reference-ranking.js';
import { seededRandom } from '../../../../test/support/seeded-random.js';
import type { EngineQuery, SearchDocument } from './search-engine.js';
import { DOCUMENTS_TABLE, FTS_TABLE } from './search-schema.js';

/**
 * The SQLite engine's top-k read (docs/search.md) against the brute-force oracle, on enough documents
 * that the read stops early and narrows: every page must still be the exact ranking, and the JS bm25 it
 * scores with must be FTS5's own, to the last bit.
 */

const PREFIXES = ['cloud', 'data', 'fast', 'micro', 'open', 'smart', 'auto', 'quick'];
const NOUNS = ['sync', 'cache', 'queue', 'store', 'parser', 'router', 'logger', 'tracer', 'metrics', 'vault'];
const WORDS = ['files', 'notes', 'tasks', 'events', 'secure', 'portable', 'café', 'naïve', 'Ωmega', '東京', 'fast'];
const PUBLISHERS = ['pub-a', 'pub-b', 'pub-c', 'pub-d'];

function generate(count: number): SearchDocument[] {
  const rng = seededRandom(424242);
  const taken = new Set<string>();
  return Array.from({ length: count }, (_, index) => {
    const prefix = rng.pick(PREFIXES);
    const noun = rng.pick(NOUNS);
    const shape = Math.floor(rng.next() * 4);
    let name =
      shape === 0
        ? `${prefix}-${noun}`
        : shape === 1
          ? `${prefix}${noun[0].toUpperCase()}${noun.slice(1)}`
          : shape === 2
            ? `${noun}_${rng.pick(NOUNS)}`
            : `${prefix}.${noun}-${rng.pick(NOUNS)}`;
    if (taken.has(name.toLowerCase())) name = `${name}-${index.toString(36)}`;
    taken.add(name.toLowerCase());
    const sentence = Array.from({ length: 3 + Math.floor(rng.next() * 8) }, () => rng.pick([...WORDS, ...NOUNS])).join(
      ' ',
    );
    const roll = rng.next();
    return {
      packageId: `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
      name,
      displayName: rng.next() < 0.7 ? `${prefix} ${noun}` : null,
      description: rng.next() < 0.9 ? sentence : null,
      keywords: rng.next() < 0.5 ? [rng.pick(NOUNS), rng.pick(WORDS)] : null,
      visibility: roll < 0.85 ? 'public' : roll < 0.95 ? 'private' : 'unlisted',
      publisherId: rng.pick(PUBLISHERS),
      packageType: rng.pick(['mod', 'library', 'theme']),
      // Zipf-like downloads: a few popular packages, a long tail (and many ties at 0).
      totalDownloads:
        Math.floor(2_000_000 / (1 + Math.floor(rng.next() ** 2.5 * count)) ** 1.1) * (rng.next() < 0.2 ? 0 : 1),
      verified: rng.next() < 0.15,
    };
  });
}

describe('Fts5SearchEngine top-k read', () => {
  const file = join(tmpdir(), `tb-fts5-${randomBytes(6).toString('hex')}.sqlite`);
  let dataSource: DataSource;
  let engine: Fts5SearchEngine;
  const documents = new Map<string, SearchDocument>();

  async function put(...changed: SearchDocument[]): Promise<void> {
    await engine.upsert(changed);
    for (const document of changed) documents.set(document.packageId, document);
  }

  function request(text: string, extra: Partial<EngineQuery> = {}): EngineQuery {
    const parsed = parseQuery(text);
    return { terms: parsed.terms, name: parsed.name, viewerPublisherId: null, offset: 0, limit: 10, ...extra };
  }

  async function expectExact(query: EngineQuery): Promise<void> {
    const reference = referenceRanking([...documents.values()], await engine.matchRelevance(query.terms), query);
    const page = await engine.search(query);
    expect({ query, ids: page.ids, total: page.total }).toEqual({
      query,
      ids: reference.slice(query.offset, query.offset + query.limit),
      total: reference.length,
    });
  }

  beforeAll(async () => {
    dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: file }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    engine = new Fts5SearchEngine(dataSource);
    await put(...generate(6000));
  }, 60_000);

  afterAll(async () => {
    await dataSource.destroy();
    await rm(file, { force: true });
  });

  const QUERIES = [
    'sync',
    'fast',
    'cloud',
    'clo',
    'cloud sync',
    'fast files',
    'files notes',
    'secure portable tasks',
    'fast router events',
    'cafe',
    'naive omega',
    '東京 tracer',
    'cloud-sync',
    'cloud-',
    'data-s',
    'quick.router-vault',
    'smartcache',
    'sync_parser',
    'x',
    'c',
    'the sync',
    'vault metrics logger queue',
  ];

  it('answers every query, page after page, as the oracle ranking over all documents', async () => {
    for (const text of QUERIES) {
      await expectExact(request(text));
      await expectExact(request(text, { offset: 10, limit: 10 }));
      await expectExact(request(text, { offset: 3, limit: 1 }));
      await expectExact(request(text, { viewerPublisherId: 'pub-b', limit: 7 }));
      await expectExact(request(text, { packageType: 'theme' }));
      await expectExact(request(text, { offset: 990, limit: 10 }));
      await expectExact(request(text, { offset: 5_000, limit: 10 }));
    }
  });

  it('ranks the same when the names starting with the query are too many to read whole', async () => {
    // A limit of 20 names: names whose first word the query holds are proven matched and met by the
    // ordered read; others (a one-letter `c`) go to the one statement.
    const strict = engine;
    engine = new Fts5SearchEngine(dataSource, { nameRange: 20 });
    try {
      const paths = new Map<string, string>();
      for (const text of QUERIES) {
        await expectExact(request(text));
        paths.set(text, engine.lastRead.path);
        await expectExact(request(text, { offset: 25, limit: 5, viewerPublisherId: 'pub-c' }));
      }
      expect(paths.get('sync')).toBe('top-k');
      expect(paths.get('cloud')).toBe('top-k');
      expect(paths.get('cloud-')).toBe('top-k');
      expect(paths.get('data-s')).toBe('top-k');
      expect(paths.get('c')).toBe('statement');
    } finally {
      engine = strict;
    }
  });

  it('suggests as the oracle: whole-name prefixes first, then names with a word starting with it, by downloads', async () => {
    const visibleTo = (viewer: string | null) =>
      [...documents.values()].filter(
        (document) =>
          document.visibility === 'public' || (document.visibility === 'private' && document.publisherId === viewer),
      );
    const byDownloads = (a: SearchDocument, b: SearchDocument) =>
      b.totalDownloads - a.totalDownloads || (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1);
    const oracle = (name: string | null, word: string | null, viewer: string | null, limit: number) => {
      const candidates = visibleTo(viewer);
      const whole = name ? candidates.filter((document) => document.name.toLowerCase().startsWith(name)) : [];
      const named = new Set(whole);
      const words = word
        ? candidates.filter(
            (document) =>
              !named.has(document) && nameWords(document.name).some((nameWord) => nameWord.startsWith(word)),
          )
        : [];
      return [...whole.sort(byDownloads), ...words.sort(byDownloads)].slice(0, limit).map((document) => document.name);
    };
    const small = new Fts5SearchEngine(dataSource, { suggest: 5 });
    for (const text of ['c', 'cl', 'cloud', 'cloud-', 'clo', 'sy', 'sync', 'data.', 'micro.tr', 'zzz', 'q', 'par']) {
      const name = text;
      const word = parseQuery(text).terms.at(-1)?.term ?? null;
      for (const viewer of [null, 'pub-a'])
        for (const limit of [1, 10, 40])
          for (const candidate of [engine, small]) {
            const expected = oracle(name, word && word.length >= 2 ? word : null, viewer, limit);
            const query = {
              name,
              wordPrefix: word && word.length >= 2 ? word : null,
              viewerPublisherId: viewer,
              limit,
            };
            expect({ query, names: await candidate.suggest(query) }).toEqual({ query, names: expected });
          }
    }
  });

  it('reads far fewer documents than match when the page is decided early, and narrows the words it reads', async () => {
    const reads: Array<{ text: string; rowsRead: number; total: number; narrowings: number }> = [];
    for (const text of QUERIES) {
      const page = await engine.search(request(text));
      reads.push({ text, ...engine.lastRead, total: page.total });
    }
    const early = reads.filter((read) => read.total > 500 && read.rowsRead < read.total / 4);
    expect(early.map((read) => read.text)).toEqual(
      expect.arrayContaining(['sync', 'cloud sync', 'fast files', 'cloud-sync', 'vault metrics logger queue']),
    );
    expect(reads.some((read) => read.narrowings > 0)).toBe(true);
    // A package type filter is answered by the one statement over every match.
    await engine.search(request('sync', { packageType: 'mod' }));
    expect(engine.lastRead.path).toBe('statement');
  });

  it('keeps its word counts only while the index is unchanged: its own writes, another connection, a rollback', async () => {
    const word = 'zyzzyva';
    const lone: SearchDocument = {
      ...[...documents.values()][0],
      packageId: '00000000-0000-4000-9000-000000000001',
      name: 'lone-package',
      displayName: null,
      description: `a ${word} package`,
      keywords: null,
      visibility: 'public',
    };
    const total = async (candidate: Fts5SearchEngine = engine) => (await candidate.search(request(word))).total;
    expect(await total()).toBe(0);
    await put(lone);
    expect(await total()).toBe(1);

    // Another connection (another process) writes: SQLite's data_version tells this one.
    const other = new DataSource(createDataSourceOptions({ type: 'sqlite', location: file }));
    await other.initialize();
    try {
      const twin = { ...lone, packageId: '00000000-0000-4000-9000-000000000002', name: 'lone-twin' };
      await new Fts5SearchEngine(other).upsert([twin]);
      expect(await total()).toBe(2);
      await new Fts5SearchEngine(other).remove(twin.packageId);
      expect(await total()).toBe(1);
    } finally {
      await other.destroy();
    }

    // Counted inside a transaction that is then rolled back: nothing of it may stay.
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await engine.remove(lone.packageId);
      expect(await total()).toBe(0);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await total()).toBe(1);

    await engine.remove(lone.packageId);
    documents.delete(lone.packageId);
    expect(await total()).toBe(0);
    await expectExact(request(`${word} sync`));
  });

  it('reads the matches of rare words whole first, then only the other words in rank-key order', async () => {
    // Every word of the generated data is common: the limit is set to the rarest word's public matches
    // (that word is read whole, the others in order), then to all of them (no ordered read at all).
    const publicMatches = async (term: EngineQuery['terms'][number]) =>
      Number(
        (
          await dataSource.query(`SELECT count(*) AS n FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ? AND rowid < ?`, [
            fts5Match([term]),
            CLASS_SPAN,
          ])
        )[0].n,
      );
    const strict = engine;
    try {
      for (const text of ['cafe sync', 'naive ωmega', '東京 tracer', 'ωmega fast files', 'cloud-sync']) {
        const counts = await Promise.all(parseQuery(text).terms.map(publicMatches));
        for (const seed of [
          Math.min(...counts.filter((count) => count > 0)),
          counts.reduce((sum, count) => sum + count, 0),
        ]) {
          engine = new Fts5SearchEngine(dataSource, { seed });
          await expectExact(request(text));
          // Documents the name range or an earlier word already read are not read again.
          const { seeded } = engine.lastRead;
          expect({ text, seed, seeded: seeded > 0 && seeded <= seed }).toEqual({ text, seed, seeded: true });
          await expectExact(request(text, { offset: 15, limit: 5 }));
          await expectExact(request(text, { viewerPublisherId: 'pub-a' }));
        }
      }
    } finally {
      engine = strict;
    }
  });

  it('scores with the same doubles as FTS5 bm25', async () => {
    const [{ block }] = await dataSource.query(`SELECT block FROM ${FTS_TABLE}_data WHERE id = 1`);
    const { rows, tokens } = decodeAverages(block);
    for (const text of ['sync', 'clo', 'fast files', 'cafe naive omega 東京', 'vault metrics logger queue']) {
      const { terms } = parseQuery(text);
      const idf: number[] = [];
      for (const term of terms) {
        const [{ hits }] = await dataSource.query(
          `SELECT count(*) AS hits FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?`,
          [fts5Match([term])],
        );
        const [{ ln }] = await dataSource.query('SELECT ln(?) AS ln', [idfRatio(rows, Number(hits))]);
        idf.push(clampIdf(ln));
      }
      const expected = await engine.matchRelevance(terms);
      const stored: Array<{ id: string; text: string; tokens: number }> = await dataSource.query(
        `SELECT d.package_id AS id, d.text AS text, d.tokens AS tokens FROM ${DOCUMENTS_TABLE} d`,
      );
      let matched = 0;
      for (const row of stored) {
        const relevance = bm25({ terms, averageLength: tokens / rows, idf }, row.text, Number(row.tokens));
        expect(relevance > 0).toBe(expected.has(row.id));
        if (relevance > 0) {
          matched += 1;
          expect(Object.is(relevance, expected.get(row.id))).toBe(true);
        }
      }
      expect(matched).toBe(expected.size);
      expect(matched).toBeGreaterThan(0);
    }
  });

  it('moves a document to the rank key of its new multiplier, text and all, on downloads, verification and visibility', async () => {
    const target = [...documents.values()].find((document) => document.visibility === 'public' && !document.verified)!;
    const keyOf = async () =>
      Number(
        (await dataSource.query(`SELECT rank_key FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`, [target.packageId]))[0]
          .rank_key,
      );
    const before = await keyOf();
    await engine.setDownloads(target.packageId, 5_000_000);
    documents.set(target.packageId, { ...target, totalDownloads: 5_000_000 });
    const after = await keyOf();
    expect(after).toBeLessThan(before);
    expect(after % 2 ** 32).toBe(before % 2 ** 32);
    const [{ texts }] = await dataSource.query(`SELECT count(*) AS texts FROM ${FTS_TABLE} WHERE rowid IN (?, ?)`, [
      before,
      after,
    ]);
    expect(Number(texts)).toBe(1);
    await expectExact(request(target.name.toLowerCase()));
    await expectExact(request(parseQuery(target.name).terms[0].term));

    await engine.setPublisherVerified(target.publisherId, true);
    for (const document of documents.values())
      if (document.publisherId === target.publisherId)
        documents.set(document.packageId, { ...document, verified: true });
    expect(await keyOf()).toBe(rankKey(after % 2 ** 32, 'public', rankingMultiplier(5_000_000, true)));
    await expectExact(request('sync'));

    const hidden = { ...documents.get(target.packageId)!, visibility: 'private' };
    await put(hidden);
    expect(await keyOf()).toBeGreaterThanOrEqual(CLASS_SPAN);
    await expectExact(request(hidden.name.toLowerCase()));
    await expectExact(request(hidden.name.toLowerCase(), { viewerPublisherId: hidden.publisherId }));
    await engine.setPublisherVerified(target.publisherId, false);
    for (const document of documents.values())
      if (document.publisherId === target.publisherId)
        documents.set(document.packageId, { ...document, verified: false });
    for (const text of ['sync', 'fast files', 'cloud'])
      await expectExact(request(text, { viewerPublisherId: target.publisherId }));

    await engine.remove(target.packageId);
    documents.delete(target.packageId);
    const [{ texts: remaining }] = await dataSource.query(`SELECT count(*) AS texts FROM ${FTS_TABLE}`);
    const [{ rows: stored }] = await dataSource.query(`SELECT count(*) AS rows FROM ${DOCUMENTS_TABLE}`);
    expect([Number(remaining), Number(stored)]).toEqual([documents.size, documents.size]);
    await expectExact(request('sync'));
  });
});
