import type { DataSource, EntityManager } from 'typeorm';
import { COLUMN_WEIGHTS, prefixUpperBound } from '../search-terms.js';
import type { EnginePage, EngineQuery, EngineSuggest, SearchDocument, SearchEngine } from './search-engine.js';
import {
  DOCUMENT_COLUMNS,
  DOCUMENTS_PER_INSERT,
  assertPlainWord,
  documentRow,
  downloadsUpdate,
  filtersSql,
  tierSql,
  verificationUpdate,
  visibleSql,
} from './search-engine-sql.js';
import { DOCUMENTS_TABLE, FTS_TABLE, TEXT_COLUMNS } from './search-schema.js';

const BM25 = `bm25(${FTS_TABLE}, ${COLUMN_WEIGHTS.name}, ${COLUMN_WEIGHTS.displayName}, ${COLUMN_WEIGHTS.keywords}, ${COLUMN_WEIGHTS.description})`;

/** `"cloud" OR "sync"*`: every word quoted (any text is a plain string to FTS5), the prefix starred. */
export function fts5Match(terms: EngineQuery['terms'], column?: string): string {
  const expression = terms
    .map((term) => `"${assertPlainWord(term).replaceAll('"', '""')}"${term.prefix ? '*' : ''}`)
    .join(' OR ');
  return column ? `${column} : (${expression})` : expression;
}

/**
 * SQLite FTS5 (unicode61, diacritics removed, prefix indexes of 2–4 characters). Relevance is
 * bm25 with column weights, negated (FTS5's bm25 is lower for better matches). The FTS rowid is
 * `package_search_documents.doc_id`, whose row carries visibility, type, downloads and the multiplier.
 */
export class Fts5SearchEngine implements SearchEngine {
  readonly label = 'SQLite FTS5';

  constructor(private readonly dataSource: DataSource) {}

  async upsert(documents: SearchDocument[]): Promise<void> {
    for (let start = 0; start < documents.length; start += DOCUMENTS_PER_INSERT) {
      const chunk = documents.slice(start, start + DOCUMENTS_PER_INSERT);
      await this.dataSource.transaction((manager) => this.upsertChunk(manager, chunk));
    }
  }

  private async upsertChunk(manager: EntityManager, documents: SearchDocument[]): Promise<void> {
    const rows = [...new Map(documents.map((document) => [document.packageId, documentRow(document)])).values()];
    const ids = rows.map((row) => row.packageId);
    const marks = ids.map(() => '?').join(', ');
    await manager.query(
      `DELETE FROM ${FTS_TABLE} WHERE rowid IN (SELECT doc_id FROM ${DOCUMENTS_TABLE} WHERE package_id IN (${marks}))`,
      ids,
    );
    const written: Array<{ doc_id: number; package_id: string }> = await manager.query(
      `INSERT INTO ${DOCUMENTS_TABLE} (${DOCUMENT_COLUMNS}) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (package_id) DO UPDATE SET name = excluded.name, name_lower = excluded.name_lower,
         visibility = excluded.visibility, publisher_id = excluded.publisher_id, package_type = excluded.package_type,
         total_downloads = excluded.total_downloads, verified = excluded.verified, multiplier = excluded.multiplier
       RETURNING doc_id, package_id`,
      rows.flatMap((row) => [
        row.packageId,
        row.name,
        row.nameLower,
        row.visibility,
        row.publisherId,
        row.packageType,
        row.totalDownloads,
        row.verified,
        row.multiplier,
      ]),
    );
    const docIds = new Map(written.map((row) => [row.package_id, Number(row.doc_id)]));
    await manager.query(
      `INSERT INTO ${FTS_TABLE} (rowid, ${TEXT_COLUMNS.join(', ')}) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      rows.flatMap((row) => [docIds.get(row.packageId), ...row.text]),
    );
  }

  async remove(packageId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `DELETE FROM ${FTS_TABLE} WHERE rowid IN (SELECT doc_id FROM ${DOCUMENTS_TABLE} WHERE package_id = ?)`,
        [packageId],
      );
      await manager.query(`DELETE FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`, [packageId]);
    });
  }

  async setDownloads(packageId: string, totalDownloads: number): Promise<void> {
    const update = downloadsUpdate(packageId, totalDownloads);
    await this.dataSource.query(update.sql, update.parameters);
  }

  async setPublisherVerified(publisherId: string, verified: boolean): Promise<void> {
    const update = verificationUpdate(publisherId, verified, '/');
    await this.dataSource.query(update.sql, update.parameters);
  }

  async search(query: EngineQuery): Promise<EnginePage> {
    const sources: string[] = [];
    const sourceParameters: Array<string | number> = [];
    if (query.terms.length > 0) {
      sources.push(`SELECT rowid AS doc_id, -${BM25} AS relevance FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?`);
      sourceParameters.push(fts5Match(query.terms));
    }
    if (query.name) {
      sources.push(`SELECT doc_id, 0 AS relevance FROM ${DOCUMENTS_TABLE} WHERE name_lower >= ? AND name_lower < ?`);
      sourceParameters.push(query.name, prefixUpperBound(query.name));
    }
    if (sources.length === 0) return { ids: [], total: 0 };
    // A package both matched and named is one row, with its text relevance.
    const matches =
      sources.length === 1
        ? sources[0]
        : `SELECT doc_id, MAX(relevance) AS relevance FROM (${sources.join(' UNION ALL ')}) GROUP BY doc_id`;
    const filters = filtersSql('d', query);
    const tier = tierSql('d.name_lower', query.name);
    const from = `FROM (${matches}) m JOIN ${DOCUMENTS_TABLE} d ON d.doc_id = m.doc_id WHERE ${filters.sql}`;
    const rows: Array<{ id: string; total: number }> = await this.dataSource.query(
      `SELECT d.package_id AS id, COUNT(*) OVER () AS total ${from}
       ORDER BY ${tier.sql} m.relevance * d.multiplier DESC, d.total_downloads DESC, d.name_lower ASC
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

  async suggest(query: EngineSuggest): Promise<string[]> {
    const visible = visibleSql('d', query.viewerPublisherId);
    const order = 'ORDER BY d.total_downloads DESC, d.name_lower ASC LIMIT ?';
    const branches: string[] = [];
    const parameters: Array<string | number> = [];
    const columns = 'd.name AS name, d.name_lower AS name_lower, d.total_downloads AS total_downloads';
    if (query.name) {
      branches.push(
        `SELECT * FROM (SELECT ${columns}, 1 AS whole FROM ${DOCUMENTS_TABLE} d
         WHERE d.name_lower >= ? AND d.name_lower < ? AND ${visible.sql} ${order})`,
      );
      parameters.push(query.name, prefixUpperBound(query.name), ...visible.parameters, query.limit);
    }
    if (query.wordPrefix) {
      // Names that start with the text are the first branch's, so each name is listed once.
      const notWhole = query.name ? 'AND NOT (d.name_lower >= ? AND d.name_lower < ?)' : '';
      branches.push(
        `SELECT * FROM (SELECT ${columns}, 0 AS whole FROM ${FTS_TABLE} f JOIN ${DOCUMENTS_TABLE} d ON d.doc_id = f.rowid
         WHERE ${FTS_TABLE} MATCH ? ${notWhole} AND ${visible.sql} ${order})`,
      );
      parameters.push(fts5Match([{ term: query.wordPrefix, prefix: true }], TEXT_COLUMNS[0]));
      if (query.name) parameters.push(query.name, prefixUpperBound(query.name));
      parameters.push(...visible.parameters, query.limit);
    }
    if (branches.length === 0) return [];
    const rows: Array<{ name: string }> = await this.dataSource.query(
      `SELECT name FROM (${branches.join(' UNION ALL ')}) ORDER BY whole DESC, total_downloads DESC, name_lower ASC LIMIT ?`,
      [...parameters, query.limit],
    );
    return rows.map((row) => row.name);
  }

  async matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const rows: Array<{ id: string; relevance: number }> = await this.dataSource.query(
      `SELECT d.package_id AS id, m.relevance AS relevance
       FROM (SELECT rowid AS doc_id, -${BM25} AS relevance FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?) m
       JOIN ${DOCUMENTS_TABLE} d ON d.doc_id = m.doc_id`,
      [fts5Match(terms)],
    );
    return new Map(rows.map((row) => [row.id, Number(row.relevance)]));
  }

  missingDocumentSql(): string {
    return `NOT EXISTS (SELECT 1 FROM ${DOCUMENTS_TABLE} sd WHERE sd.package_id = p.id)`;
  }
}
