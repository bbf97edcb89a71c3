import type { DataSource } from 'typeorm';
import {
  COLUMN_WEIGHTS,
  UNVERIFIED_FACTOR,
  clip,
  documentText,
  downloadsAboveBoost,
  joinedNamePrefix,
  prefixUpperBound,
  rankingMultiplier,
} from '../search-terms.js';
import type { EnginePage, EngineQuery, EngineSuggest, SearchDocument, SearchEngine } from './search-engine.js';
import { DOCUMENTS_PER_INSERT, assertPlainWord, filtersSql, tierSql, visibleSql } from './search-engine-sql.js';
import { DOCUMENTS_TABLE, FTS_TABLE, TEXT_COLUMNS } from './search-schema.js';
import {
  CLASS_SPAN,
  MAX_DOC_ID,
  MAX_MULTIPLIER,
  VISIBILITY_CLASSES,
  bm25,
  clampIdf,
  decodeAverages,
  idfRatio,
  phraseBound,
  rankKey,
  tokenCount,
  type Bm25Query,
} from './fts5-ranking.js';

const BM25 = `bm25(${FTS_TABLE}, ${COLUMN_WEIGHTS.name}, ${COLUMN_WEIGHTS.displayName}, ${COLUMN_WEIGHTS.keywords}, ${COLUMN_WEIGHTS.description})`;
const PUBLIC_END = (VISIBILITY_CLASSES.public + 1) * CLASS_SPAN;
const PRIVATE_START = VISIBILITY_CLASSES.private * CLASS_SPAN;
const PRIVATE_END = (VISIBILITY_CLASSES.private + 1) * CLASS_SPAN;
/** Deeper pages than this are ranked by the one statement (the top-k read keeps offset + limit entries). */
const TOP_K_LIMIT = 1000;
/** Names starting with the query are read whole, scored in JS, when at most this many are visible. */
export const NAME_RANGE_READ_LIMIT = 2000;

/** `"cloud" OR "sync"*`: every word quoted (any text is a plain string to FTS5), the prefix starred. */
export function fts5Match(terms: EngineQuery['terms'], column?: string, operator: 'OR' | 'AND' = 'OR'): string {
  const expression = terms
    .map((term) => `"${assertPlainWord(term).replaceAll('"', '""')}"${term.prefix ? '*' : ''}`)
    .join(` ${operator} `);
  return column ? `${column} : (${expression})` : expression;
}

/** The part of better-sqlite3 this engine uses directly (TypeORM's driver holds the connection). */
interface SqliteStatement {
  all(...parameters: unknown[]): any[];
  get(...parameters: unknown[]): any;
  run(...parameters: unknown[]): { changes: number };
  iterate(...parameters: unknown[]): IterableIterator<any>;
  pluck(toggle?: boolean): SqliteStatement;
  raw(toggle?: boolean): SqliteStatement;
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  transaction<T>(action: () => T): () => T;
  readonly inTransaction: boolean;
}

/** How many words' counts the statistics cache holds before it starts over. */
const CACHED_COUNTS = 4096;

/**
 * The FTS5 statistics a search reads before ranking (the averages record, each expression's match
 * counts), kept while the index is unchanged: SQLite's `PRAGMA data_version` moves when another
 * connection (another process) commits, and the engine counts its own writes (`changed`). Nothing is
 * read from or put in it inside an open transaction: a rollback would leave counts of writes that never
 * happened.
 */
class IndexStatistics {
  private version = '';
  private writes = 0;
  private averages: { rows: number; tokens: number } | null = null;
  private readonly counts = new Map<string, { hits: number; visible: number }>();

  /** The engine writes to the index (called before each write; writes are synchronous, no search runs between). */
  changed(): void {
    this.writes += 1;
  }

  /** Whether the cache may be used now; clears it when the database changed since it was filled. */
  usable(connection: SqliteConnection, dataVersion: () => number): boolean {
    if (connection.inTransaction) return false;
    const version = `${dataVersion()}:${this.writes}`;
    if (version !== this.version) {
      this.version = version;
      this.averages = null;
      this.counts.clear();
    }
    return true;
  }

  averagesOr(cached: boolean, read: () => { rows: number; tokens: number }) {
    if (!cached) return read();
    this.averages ??= read();
    return this.averages;
  }

  countOr(cached: boolean, expression: string, read: () => { hits: number; visible: number }) {
    if (!cached) return read();
    let counted = this.counts.get(expression);
    if (!counted) {
      if (this.counts.size >= CACHED_COUNTS) this.counts.clear();
      counted = read();
      this.counts.set(expression, counted);
    }
    return counted;
  }
}

/** A document as the ranking reads it: rank key (FTS rowid), text columns and ranking attributes. */
interface RankedRow {
  key: number;
  packageId: string;
  name: string;
  downloads: number;
  multiplier: number;
  /** The four text columns, joined by tabs (TEXT_SEPARATOR), and their word count. */
  text: string;
  tokens: number;
}

/** One ranked entry: tier (2 exact name, 1 name prefix, 0 other), score, then downloads and name. */
interface Ranked {
  tier: number;
  score: number;
  downloads: number;
  name: string;
  /** The rank key (unique: the last tie-break), and the package id once read. */
  key: number;
  packageId: string | null;
}

function compareRanked(a: Ranked, b: Ranked): number {
  return (
    b.tier - a.tier ||
    b.score - a.score ||
    b.downloads - a.downloads ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    a.key - b.key
  );
}

/** The best `size` entries seen so far, best first (a sorted array: pages are small). */
class TopK {
  readonly entries: Ranked[] = [];

  constructor(readonly size: number) {}

  get full(): boolean {
    return this.entries.length >= this.size;
  }

  /** The entry an unseen one must beat (only when full). */
  get threshold(): Ranked {
    return this.entries[this.size - 1];
  }

  offer(entry: Ranked): void {
    if (this.full && compareRanked(entry, this.threshold) >= 0) return;
    let index = this.entries.length;
    this.entries.push(entry);
    while (index > 0 && compareRanked(entry, this.entries[index - 1]) < 0) {
      this.entries[index] = this.entries[index - 1];
      index -= 1;
    }
    this.entries[index] = entry;
    if (this.entries.length > this.size) this.entries.pop();
  }
}

/** Words whose public matches number at most this many, together, are read whole before the ordered read. */
const SEED_READ_LIMIT = 400;

/** The multiplier a rank key was made with (fts5-ranking.ts rankKey). */
function multiplierOf(key: number): number {
  return MAX_MULTIPLIER + 1 - Math.floor((key % CLASS_SPAN) / 2 ** 32);
}

/** Suggestions: a name range or word of at most this many visible names is read whole. */
const SUGGEST_READ_LIMIT = 500;
/** The shortest prefix FTS5 keeps an index for (migration 1763800001600: `prefix='2 3 4 5 6'`). */
const PREFIX_INDEX_MIN = 2;
const SUGGEST_BATCH = 64;

type SuggestedRow = [name: string, nameLower: string, downloads: number];
interface Suggested {
  name: string;
  nameLower: string;
  downloads: number;
}

function suggested([name, nameLower, downloads]: SuggestedRow): Suggested {
  return { name, nameLower, downloads: Number(downloads) };
}

function compareSuggested(a: Suggested, b: Suggested): number {
  return b.downloads - a.downloads || (a.nameLower < b.nameLower ? -1 : a.nameLower > b.nameLower ? 1 : 0);
}

function bestSuggestions(entries: Suggested[], limit: number): Suggested[] {
  return entries.sort(compareSuggested).slice(0, limit);
}

/** The best `size` suggestions of a read in rank-key order, and whether an unread one could still enter. */
class SuggestionList {
  readonly entries: Suggested[] = [];

  constructor(readonly size: number) {}

  offer(entry: Suggested): void {
    if (this.entries.length >= this.size && compareSuggested(entry, this.entries[this.size - 1]) >= 0) return;
    this.entries.push(entry);
    this.entries.sort(compareSuggested);
    if (this.entries.length > this.size) this.entries.pop();
  }

  /** Full, and its last entry has at least the downloads every document at or after `key` stays below. */
  complete(key: number): boolean {
    if (this.entries.length < this.size) return false;
    const boost = Math.floor(multiplierOf(key) / UNVERIFIED_FACTOR);
    return this.entries[this.size - 1].downloads >= downloadsAboveBoost(boost);
  }
}

/** The documents table keeps the FTS text (contentless) as the four columns joined by a tab, which no word holds. */
const TEXT_SEPARATOR = '\t';

const ROW_COLUMNS = `d.rank_key AS key, d.package_id AS packageId, d.name_lower AS name, d.total_downloads AS downloads,
  d.multiplier AS multiplier, d.text AS text, d.tokens AS tokens`;

/**
 * SQLite FTS5 (contentless, `ascii` tokenizer over text normalized in JS, prefix indexes of 2–6
 * characters; the text is kept in the documents table). Relevance is FTS5's bm25 with column weights.
 * The FTS rowid is the document's rank key (fts5-ranking.ts): visibility class, multiplier descending,
 * doc_id. A search reads the public matches in that order (after reading rare words' matches whole),
 * scores them in JS exactly as FTS5's bm25 does, and stops as soon as no unread match can reach the page
 * (docs/search.md); queries the top-k read cannot answer (a package type filter, a large name range it
 * cannot prove matched) are one SQL statement over every match.
 */
export class Fts5SearchEngine implements SearchEngine {
  readonly label = 'SQLite FTS5';
  /** How the last search was answered (for tests and benchmarks): path, documents read and scored, narrowings. */
  lastRead: { path: 'top-k' | 'statement'; rowsRead: number; seeded: number; narrowings: number } = {
    path: 'statement',
    rowsRead: 0,
    seeded: 0,
    narrowings: 0,
  };
  private readonly statements = new Map<string, SqliteStatement>();
  private readonly statistics = new IndexStatistics();

  private readonly nameRangeReadLimit: number;
  private readonly suggestReadLimit: number;
  private readonly seedReadLimit: number;

  /** `limits` moves the read-whole thresholds (tests use it to reach each path on little data). */
  constructor(
    private readonly dataSource: DataSource,
    limits: { nameRange?: number; suggest?: number; seed?: number } = {},
  ) {
    this.nameRangeReadLimit = limits.nameRange ?? NAME_RANGE_READ_LIMIT;
    this.suggestReadLimit = limits.suggest ?? SUGGEST_READ_LIMIT;
    this.seedReadLimit = limits.seed ?? SEED_READ_LIMIT;
  }

  private get connection(): SqliteConnection {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
  }

  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.connection.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async upsert(documents: SearchDocument[]): Promise<void> {
    for (let start = 0; start < documents.length; start += DOCUMENTS_PER_INSERT) {
      const chunk = documents.slice(start, start + DOCUMENTS_PER_INSERT);
      this.statistics.changed();
      this.connection.transaction(() => this.upsertChunk(chunk))();
    }
  }

  private upsertChunk(documents: SearchDocument[]): void {
    const unique = [...new Map(documents.map((document) => [document.packageId, document])).values()];
    const find = this.statement(`SELECT doc_id AS docId, rank_key AS key FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`);
    const removeText = this.statement(`DELETE FROM ${FTS_TABLE} WHERE rowid = ?`);
    const update = this.statement(
      `UPDATE ${DOCUMENTS_TABLE} SET rank_key = ?, name = ?, name_lower = ?, visibility = ?, publisher_id = ?,
         package_type = ?, total_downloads = ?, verified = ?, multiplier = ?, tokens = ?, text = ? WHERE rank_key = ?`,
    );
    const insert = this.statement(
      `INSERT INTO ${DOCUMENTS_TABLE} (doc_id, rank_key, package_id, name, name_lower, visibility, publisher_id,
         package_type, total_downloads, verified, multiplier, tokens, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertText = this.statement(
      `INSERT INTO ${FTS_TABLE} (rowid, ${TEXT_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?)`,
    );
    let nextDocId: number | null = null;
    for (const document of unique) {
      const multiplier = rankingMultiplier(document.totalDownloads, document.verified);
      const existing: { docId: number; key: number } | undefined = find.get(document.packageId);
      const text = documentText(document);
      const columns = [text.nameWords, text.displayWords, text.keywordWords, text.descriptionWords];
      const attributes = [
        document.name,
        document.name.toLowerCase(),
        document.visibility,
        document.publisherId,
        document.packageType,
        document.totalDownloads,
        document.verified ? 1 : 0,
        multiplier,
        tokenCount(columns),
        columns.join(TEXT_SEPARATOR),
      ];
      let key: number;
      if (existing) {
        removeText.run(existing.key);
        key = rankKey(existing.docId, document.visibility, multiplier);
        update.run(key, ...attributes, existing.key);
      } else {
        nextDocId ??=
          Number(this.statement(`SELECT COALESCE(MAX(doc_id), 0) FROM ${DOCUMENTS_TABLE}`).pluck().get()) + 1;
        if (nextDocId > MAX_DOC_ID) throw new Error('search documents: doc_id space exhausted');
        key = rankKey(nextDocId, document.visibility, multiplier);
        insert.run(nextDocId, key, document.packageId, ...attributes);
        nextDocId += 1;
      }
      insertText.run(key, ...columns);
    }
  }

  async remove(packageId: string): Promise<void> {
    this.statistics.changed();
    this.connection.transaction(() => {
      const key = this.statement(`SELECT rank_key FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`).pluck().get(packageId);
      if (key === undefined) return;
      this.statement(`DELETE FROM ${FTS_TABLE} WHERE rowid = ?`).run(key);
      this.statement(`DELETE FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`).run(packageId);
    })();
  }

  /**
   * Moves a document to the rank key of its new multiplier (its text row moves with it), or only
   * records the new download count when the multiplier stays (the usual case: steps are ~26 % apart).
   */
  private rekey(
    row: { docId: number; key: number; visibility: string; text: string },
    multiplier: number,
    assignments: string,
    parameters: unknown[],
  ): void {
    const key = rankKey(row.docId, row.visibility, multiplier);
    if (key !== row.key) {
      this.statistics.changed();
      this.statement(`DELETE FROM ${FTS_TABLE} WHERE rowid = ?`).run(row.key);
      this.statement(`INSERT INTO ${FTS_TABLE} (rowid, ${TEXT_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?)`).run(
        key,
        ...row.text.split(TEXT_SEPARATOR),
      );
    }
    this.statement(`UPDATE ${DOCUMENTS_TABLE} SET ${assignments}, multiplier = ?, rank_key = ? WHERE rank_key = ?`).run(
      ...parameters,
      multiplier,
      key,
      row.key,
    );
  }

  async setDownloads(packageId: string, totalDownloads: number): Promise<void> {
    this.connection.transaction(() => {
      const row = this.statement(
        `SELECT doc_id AS docId, rank_key AS key, visibility, verified, total_downloads AS downloads, text
         FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`,
      ).get(packageId);
      if (!row || Number(row.downloads) === totalDownloads) return;
      const multiplier = rankingMultiplier(totalDownloads, row.verified === 1);
      this.rekey(row, multiplier, 'total_downloads = ?', [totalDownloads]);
    })();
  }

  async setPublisherVerified(publisherId: string, verified: boolean): Promise<void> {
    this.connection.transaction(() => {
      const rows = this.statement(
        `SELECT doc_id AS docId, rank_key AS key, visibility, total_downloads AS downloads, text
         FROM ${DOCUMENTS_TABLE} WHERE publisher_id = ? AND verified <> ?`,
      ).all(publisherId, verified ? 1 : 0);
      for (const row of rows)
        this.rekey(row, rankingMultiplier(Number(row.downloads), verified), 'verified = ?', [verified ? 1 : 0]);
    })();
  }

  async search(query: EngineQuery): Promise<EnginePage> {
    if (query.terms.length > 0 && !query.packageType && query.offset + query.limit <= TOP_K_LIMIT) {
      const page = this.searchTopK(query);
      if (page) return page;
    }
    this.lastRead = { path: 'statement', rowsRead: 0, seeded: 0, narrowings: 0 };
    return this.searchAll(query);
  }

  /**
   * bm25's statistics of the query (FTS5's row and token counts, each word's idf over all rows) and the
   * public matches' count. Each counting pass counts all rows and the public ones at once: one per word,
   * and for several words one more for the others' matches without the most common word's (`(b OR c)
   * NOT a`), which reads far less than the OR of all.
   */
  private bm25Query(terms: EngineQuery['terms']): {
    stats: Bm25Query;
    publicMatches: number;
    publicPerWord: number[];
  } {
    const cached = this.statistics.usable(this.connection, () =>
      Number(this.statement('PRAGMA data_version').pluck().get()),
    );
    const { rows, tokens } = this.statistics.averagesOr(cached, () =>
      decodeAverages(
        this.statement(`SELECT block FROM ${FTS_TABLE}_data WHERE id = 1`).pluck().get() ?? new Uint8Array(),
      ),
    );
    const counting = this.statement(
      `SELECT count(*) AS hits, sum(rowid < ?) AS visible FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?`,
    );
    const count = (expression: string) =>
      this.statistics.countOr(cached, expression, () => {
        const { hits, visible } = counting.get(PUBLIC_END, expression) as { hits: number; visible: number | null };
        return { hits: Number(hits), visible: Number(visible ?? 0) };
      });
    const each = terms.map((term) => count(fts5Match([term])));
    // The most common word's matches, plus the others' matches without it (FTS5 reads the smaller side).
    const common = each.reduce((best, counted, index) => (counted.hits > each[best].hits ? index : best), 0);
    const others = terms.filter((_, index) => index !== common);
    const publicMatches =
      each[common].visible +
      (others.length === 0 ? 0 : count(`(${fts5Match(others)}) NOT ${fts5Match([terms[common]])}`).visible);
    const ln = this.statement('SELECT ln(?)').pluck();
    const idf = each.map(({ hits }) => clampIdf(Number(ln.get(idfRatio(rows, hits)))));
    return {
      stats: { terms, averageLength: tokens / rows, idf },
      publicMatches,
      publicPerWord: each.map(({ visible }) => visible),
    };
  }

  /**
   * The top-k read (docs/search.md): the caller's private matches and the names starting with the
   * query are read whole; the public matches are read in rank-key order (multiplier descending) and
   * scored in JS, and the read stops once the page's last entry beats what any unread match could
   * score (every word's bm25 term is below idf × (k1 + 1)). As the bar rises, the read narrows to the
   * words a match must still contain (MaxScore: rarely-weighty words can no longer lift a document
   * alone; a word without which no document reaches the bar is required). Returns null when the name
   * range is too large to read and cannot be proven to be matched.
   */
  private searchTopK(query: EngineQuery): EnginePage | null {
    const { terms, name } = query;
    const { stats, publicMatches, publicPerWord } = this.bm25Query(terms);
    const bounds = stats.idf.map(phraseBound);
    const top = new TopK(query.offset + query.limit);
    const seen = new Set<number>();
    const tierOf = (rowName: string) => (!name ? 0 : rowName === name ? 2 : rowName.startsWith(name) ? 1 : 0);
    const read = { path: 'top-k' as const, rowsRead: 0, seeded: 0, narrowings: 0 };
    const offer = (row: RankedRow, relevance: number) => {
      read.rowsRead += 1;
      top.offer({
        tier: tierOf(row.name),
        score: relevance * row.multiplier,
        downloads: Number(row.downloads),
        name: row.name,
        key: row.key,
        packageId: row.packageId,
      });
    };
    const everything = fts5Match(terms);
    let total = publicMatches;

    if (query.viewerPublisherId) {
      const own = this.statement(
        `SELECT ${ROW_COLUMNS} FROM ${FTS_TABLE} f JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = f.rowid
         WHERE ${FTS_TABLE} MATCH ? AND f.rowid >= ? AND f.rowid < ? AND d.publisher_id = ?`,
      ).all(everything, PRIVATE_START, PRIVATE_END, query.viewerPublisherId) as RankedRow[];
      for (const row of own) {
        seen.add(row.key);
        offer(row, bm25(stats, row.text, row.tokens));
      }
      total += own.length;
    }

    // Names starting with the query rank above every other match: read them whole when few, else only
    // when every one of them provably matches (then the ordered read meets them like any match).
    let unreadNamed = 0;
    if (name) {
      const visible = visibleSql('d', query.viewerPublisherId);
      const range = [name, prefixUpperBound(name)];
      const named = Number(
        this.statement(
          `SELECT count(*) FROM ${DOCUMENTS_TABLE} d WHERE d.name_lower >= ? AND d.name_lower < ? AND ${visible.sql}`,
        )
          .pluck()
          .get(...range, ...visible.parameters),
      );
      if (named <= this.nameRangeReadLimit) {
        const rows = this.statement(
          `SELECT ${ROW_COLUMNS} FROM ${DOCUMENTS_TABLE} d
           WHERE d.name_lower >= ? AND d.name_lower < ? AND ${visible.sql}`,
        ).all(...range, ...visible.parameters) as RankedRow[];
        for (const row of rows) {
          if (seen.has(row.key)) continue;
          seen.add(row.key);
          const relevance = bm25(stats, row.text, row.tokens);
          offer(row, relevance);
          // Not among the counted matches: no query word occurs (bm25 is above 0 exactly when one does).
          if (relevance === 0) total += 1;
        }
      } else if (everyNameMatches(name, terms)) {
        unreadNamed = Number(
          this.statement(
            `SELECT count(*) FROM ${DOCUMENTS_TABLE} d WHERE d.name_lower >= ? AND d.name_lower < ? AND d.rank_key < ?`,
          )
            .pluck()
            .get(...range, PUBLIC_END),
        );
      } else {
        return null;
      }
    }

    if (query.offset >= total) {
      this.lastRead = read;
      return { ids: [], total };
    }

    // Words with few public matches are read whole first (rarest first, seedReadLimit documents in
    // all): they raise the bar early, and every document left unread holds none of them, so the ordered
    // read below only meets the other words' matches, bounded by those words alone.
    const seeded: number[] = [];
    let seedRows = 0;
    for (const index of terms.map((_, index) => index).sort((a, b) => publicPerWord[a] - publicPerWord[b])) {
      if (seedRows + publicPerWord[index] > this.seedReadLimit) break;
      seedRows += publicPerWord[index];
      seeded.push(index);
    }
    const rest = terms.map((_, index) => index).filter((index) => !seeded.includes(index));
    const order = [...rest].sort((a, b) => bounds[a] - bounds[b]);
    const sum = (indexes: number[]) => indexes.reduce((total, index) => total + bounds[index], 0);
    const boundAll = sum(rest);
    let from = 0;
    // Each match comes with its document row (one rowid lookup in SQLite's join): rank key (the
    // multiplier is in it), stored length and text; name and downloads only where the tier needs them.
    const join = `FROM ${FTS_TABLE} f JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = f.rowid
      WHERE ${FTS_TABLE} MATCH ? AND f.rowid >= ? AND f.rowid < ? ORDER BY f.rowid`;
    const texts = this.statement(`SELECT f.rowid, d.tokens, d.text ${join}`).raw(true);
    const named = this.statement(`SELECT f.rowid, d.tokens, d.text, d.name_lower, d.total_downloads ${join}`).raw(true);
    const attributes = this.statement(
      `SELECT name_lower, total_downloads FROM ${DOCUMENTS_TABLE} WHERE rank_key = ?`,
    ).raw(true);
    type MatchRow = [key: number, tokens: number, text: string, name?: string, downloads?: number];
    const score = ([key, tokens, text, rowName, downloads]: MatchRow) => {
      read.rowsRead += 1;
      const relevance = bm25(stats, text, tokens) * multiplierOf(key);
      if (rowName === undefined) {
        // Every name starting with the query is read (the `texts` rows): this one is tier 0, and it
        // cannot enter the page below the last entry's score. Name and downloads only for those that can.
        if (top.full && (top.threshold.tier > 0 || relevance < top.threshold.score)) return;
        [rowName, downloads] = attributes.get(key) as [string, number];
      } else if (unreadNamed > 0 && tierOf(rowName) > 0) unreadNamed -= 1;
      top.offer({
        tier: tierOf(rowName),
        score: relevance,
        downloads: Number(downloads),
        name: rowName,
        key,
        packageId: null,
      });
    };
    const rows = (expression: string, start: number) =>
      (unreadNamed > 0 ? named : texts).iterate(expression, start, PUBLIC_END) as IterableIterator<MatchRow>;
    if (seeded.length > 0) {
      for (const row of rows(fts5Match(seeded.map((index) => terms[index])), 0)) {
        if (seen.has(row[0])) continue;
        seen.add(row[0]);
        read.seeded += 1;
        score(row);
      }
    }
    // The narrowed expression for a bar (relevance before the multiplier), kept while the bar stays.
    let narrowedFor = { limit: Number.NaN, expression: '' };
    let expression = rest.length > 0 ? fts5Match(rest.map((index) => terms[index])) : null;
    while (expression !== null) {
      let narrowed: string | null = null;
      let stopped = false;
      // Rows with names are read while a name starting with the query is unread; once all are met, the
      // read goes on without them (the narrowing restart picks the statement again).
      for (const row of rows(expression, from)) {
        const key = row[0];
        if (top.full) {
          const bar = top.threshold;
          const multiplier = multiplierOf(key);
          // Unread documents: tier ≤ 1 while names starting with the query are unread, else 0.
          const unreadTier = unreadNamed > 0 ? 1 : 0;
          if (bar.tier > unreadTier || (bar.tier === unreadTier && bar.score > boundAll * multiplier)) {
            stopped = true;
            break;
          }
          if (bar.tier === unreadTier) {
            const limit = bar.score / multiplier;
            if (limit !== narrowedFor.limit)
              narrowedFor = { limit, expression: narrowedExpression(terms, order, rest, bounds, sum, limit) };
            if (narrowedFor.expression !== expression) {
              narrowed = narrowedFor.expression;
              read.narrowings += 1;
              from = key;
              break;
            }
          }
        }
        if (seen.has(key)) continue;
        score(row);
      }
      expression = stopped ? null : narrowed;
    }
    this.lastRead = read;
    const page = top.entries.slice(query.offset);
    const unnamed = page.filter((entry) => entry.packageId === null).map((entry) => entry.key);
    const ids = new Map<number, string>(
      unnamed.length === 0
        ? []
        : (this.statement(
            `SELECT rank_key, package_id FROM ${DOCUMENTS_TABLE} WHERE rank_key IN (SELECT value FROM json_each(?))`,
          )
            .raw(true)
            .all(JSON.stringify(unnamed)) as Array<[number, string]>),
    );
    return { ids: page.map((entry) => entry.packageId ?? ids.get(entry.key) ?? ''), total };
  }

  /** Every match in one statement, ranked by SQLite: the package type filter, and names the top-k read cannot. */
  private async searchAll(query: EngineQuery): Promise<EnginePage> {
    const sources: string[] = [];
    const sourceParameters: Array<string | number> = [];
    if (query.terms.length > 0) {
      sources.push(`SELECT rowid AS rank_key, -${BM25} AS relevance FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?`);
      sourceParameters.push(fts5Match(query.terms));
    }
    if (query.name) {
      sources.push(`SELECT rank_key, 0 AS relevance FROM ${DOCUMENTS_TABLE} WHERE name_lower >= ? AND name_lower < ?`);
      sourceParameters.push(query.name, prefixUpperBound(query.name));
    }
    if (sources.length === 0) return { ids: [], total: 0 };
    // A package both matched and named is one row, with its text relevance.
    const matches =
      sources.length === 1
        ? sources[0]
        : `SELECT rank_key, MAX(relevance) AS relevance FROM (${sources.join(' UNION ALL ')}) GROUP BY rank_key`;
    const filters = filtersSql('d', query);
    const tier = tierSql('d.name_lower', query.name);
    const from = `FROM (${matches}) m JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = m.rank_key WHERE ${filters.sql}`;
    const rows: Array<{ id: string; total: number }> = await this.dataSource.query(
      `SELECT d.package_id AS id, COUNT(*) OVER () AS total ${from}
       ORDER BY ${tier.sql} m.relevance * d.multiplier DESC, d.total_downloads DESC, d.name_lower ASC, d.package_id ASC
       LIMIT ? OFFSET ?`,
      [...sourceParameters, ...filters.parameters, ...tier.parameters, query.limit, query.offset],
    );
    if (rows.length > 0 || query.offset === 0)
      return { ids: rows.map((row) => row.id), total: Number(rows[0]?.total ?? 0) };
    // Past the last page the window has no row to report the total on.
    const [{ total }] = await this.dataSource.query(`SELECT COUNT(*) AS total ${from}`, [
      ...sourceParameters,
      ...filters.parameters,
    ]);
    return { ids: [], total: Number(total) };
  }

  /**
   * Names starting with the text first, then names with a word starting with it, each by downloads then
   * name. Small sets are read whole; large ones in rank-key order, which is multiplier order: a document
   * read with multiplier m has a popularity boost of at most m / 10, so every unread one has fewer
   * downloads than that boost's step, and the read stops once the list's last entry has at least that many.
   */
  async suggest(query: EngineSuggest): Promise<string[]> {
    if (query.limit <= 0) return [];
    const visible = visibleSql('d', query.viewerPublisherId);
    const whole: Suggested[] = [];
    if (query.name) {
      const range = [query.name, prefixUpperBound(query.name)];
      const inRange = `d.name_lower >= ? AND d.name_lower < ?`;
      const few = Number(
        this.statement(
          `SELECT count(*) FROM (SELECT 1 FROM ${DOCUMENTS_TABLE} d WHERE ${inRange} AND ${visible.sql} LIMIT ?)`,
        )
          .pluck()
          .get(...range, ...visible.parameters, this.suggestReadLimit + 1),
      );
      if (few <= this.suggestReadLimit) {
        const rows = this.statement(
          `SELECT d.name, d.name_lower, d.total_downloads FROM ${DOCUMENTS_TABLE} d WHERE ${inRange} AND ${visible.sql}`,
        )
          .raw(true)
          .all(...range, ...visible.parameters) as SuggestedRow[];
        whole.push(...bestSuggestions(rows.map(suggested), query.limit));
      } else {
        const list = new SuggestionList(query.limit);
        if (query.viewerPublisherId)
          for (const row of this.statement(
            `SELECT d.name, d.name_lower, d.total_downloads FROM ${DOCUMENTS_TABLE} d
             WHERE ${inRange} AND d.visibility = 'private' AND d.publisher_id = ?`,
          )
            .raw(true)
            .iterate(...range, query.viewerPublisherId) as IterableIterator<SuggestedRow>)
            list.offer(suggested(row));
        // Every name in the range holds its joined-prefix word, so the FTS matches of that word in rank-key
        // order are a superset of the range in the same order. A one-letter word has no prefix index (FTS5
        // would merge every word under it), so then, as without one (`-`), every document is read in order.
        const joined = joinedNamePrefix(query.name);
        const ordered = (
          joined !== null && joined.length >= PREFIX_INDEX_MIN
            ? this.statement(
                `SELECT f.rowid, d.name, d.name_lower, d.total_downloads
                 FROM ${FTS_TABLE} f JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = f.rowid
                 WHERE ${FTS_TABLE} MATCH ? AND f.rowid < ? ORDER BY f.rowid`,
              )
                .raw(true)
                .iterate(fts5Match([{ term: joined, prefix: true }], TEXT_COLUMNS[0]), PUBLIC_END)
            : this.statement(
                `SELECT d.rank_key, d.name, d.name_lower, d.total_downloads FROM ${DOCUMENTS_TABLE} d
                 WHERE d.rank_key < ? ORDER BY d.rank_key`,
              )
                .raw(true)
                .iterate(PUBLIC_END)
        ) as IterableIterator<[number, ...SuggestedRow]>;
        for (const [key, ...row] of ordered) {
          if (list.complete(key)) break;
          if (row[1] >= query.name && row[1] < range[1]) list.offer(suggested(row));
        }
        whole.push(...list.entries);
      }
    }
    const wanted = query.limit - whole.length;
    if (!query.wordPrefix || wanted <= 0) return whole.map((entry) => entry.name);

    // Names with a word starting with the text (FTS on the name column), the first list's names left out.
    const expression = fts5Match([{ term: query.wordPrefix, prefix: true }], TEXT_COLUMNS[0]);
    const startsWhole = (nameLower: string) =>
      query.name !== null && nameLower >= query.name && nameLower < prefixUpperBound(query.name);
    const list = new SuggestionList(wanted);
    if (query.viewerPublisherId)
      for (const row of this.statement(
        `SELECT d.name, d.name_lower, d.total_downloads FROM ${FTS_TABLE} f JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = f.rowid
         WHERE ${FTS_TABLE} MATCH ? AND f.rowid >= ? AND f.rowid < ? AND d.publisher_id = ?`,
      )
        .raw(true)
        .iterate(expression, PRIVATE_START, PRIVATE_END, query.viewerPublisherId) as IterableIterator<SuggestedRow>)
        if (!startsWhole(row[1])) list.offer(suggested(row));
    const keys = this.statement(
      `SELECT rowid FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ? AND rowid < ? ORDER BY rowid`,
    ).pluck();
    const documents = this.statement(
      `SELECT name, name_lower, total_downloads FROM ${DOCUMENTS_TABLE}
       WHERE rank_key IN (SELECT value FROM json_each(?))`,
    ).raw(true);
    let batch: number[] = [];
    const flush = () => {
      if (batch.length === 0) return;
      for (const row of documents.all(JSON.stringify(batch)) as SuggestedRow[])
        if (!startsWhole(row[1])) list.offer(suggested(row));
      batch = [];
    };
    for (const key of keys.iterate(expression, PUBLIC_END) as IterableIterator<number>) {
      if (list.complete(key)) break;
      batch.push(key);
      if (batch.length >= SUGGEST_BATCH) flush();
    }
    flush();
    return [...whole, ...list.entries].map((entry) => entry.name);
  }

  async matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const rows: Array<{ id: string; relevance: number }> = await this.dataSource.query(
      `SELECT d.package_id AS id, m.relevance AS relevance
       FROM (SELECT rowid AS rank_key, -${BM25} AS relevance FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?) m
       JOIN ${DOCUMENTS_TABLE} d ON d.rank_key = m.rank_key`,
      [fts5Match(terms)],
    );
    return new Map(rows.map((row) => [row.id, Number(row.relevance)]));
  }

  missingDocumentSql(): string {
    return `NOT EXISTS (SELECT 1 FROM ${DOCUMENTS_TABLE} sd WHERE sd.package_id = p.id)`;
  }
}

/**
 * Whether every package whose name starts with `name` provably matches the query's words (then the
 * ordered read meets them all like any other match). A name's segments are words of it (search-terms.ts
 * nameWords), so its first segment is: a query name that is one segment (`cloud`) is matched when the
 * query reads it as a prefix; a first segment followed by punctuation (`cloud-`, `data-s`) is the whole
 * first segment of every such name, matched when it is one of the query's words.
 */
export function everyNameMatches(name: string, terms: EngineQuery['terms']): boolean {
  const first = /^[a-z0-9]+/.exec(name)?.[0];
  if (!first) return false;
  const word = clip(first);
  if (first.length === name.length) return terms.some((term) => term.prefix && term.term === word);
  return terms.some((term) => term.term === word);
}

/**
 * The FTS5 expression an unread document must match to score above `limit` (relevance, before the
 * multiplier): the AND of the words without which the others' bounds stay at or below it, or else the
 * OR of the words left once the lowest-bounded ones, together unable to reach it, are dropped.
 */
function narrowedExpression(
  terms: EngineQuery['terms'],
  order: number[],
  all: number[],
  bounds: readonly number[],
  sum: (indexes: number[]) => number,
  limit: number,
): string {
  const required = all.filter((index) => sum(all.filter((other) => other !== index)) < limit);
  if (required.length > 0)
    return fts5Match(
      required.map((index) => terms[index]),
      undefined,
      'AND',
    );
  let dropped = 0;
  while (dropped < order.length - 1 && sum(order.slice(0, dropped + 1)) < limit) dropped += 1;
  const kept = order
    .slice(dropped)
    .sort((a, b) => a - b)
    .map((index) => terms[index]);
  return fts5Match(kept);
}
