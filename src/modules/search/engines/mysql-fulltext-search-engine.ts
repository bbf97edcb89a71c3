import type { DataSource } from 'typeorm';
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
import { DOCUMENTS_TABLE, TEXT_COLUMNS, type MysqlFulltextEngine } from './search-schema.js';

const ALL_TEXT = TEXT_COLUMNS.join(', ');
const WEIGHTS = [COLUMN_WEIGHTS.name, COLUMN_WEIGHTS.displayName, COLUMN_WEIGHTS.keywords, COLUMN_WEIGHTS.description];

/** `cloud sync*`: optional words (any one matches), the prefix starred; words carry no operator. */
export function booleanModeQuery(terms: EngineQuery['terms']): string {
  return terms.map((term) => `${assertPlainWord(term)}${term.prefix ? '*' : ''}`).join(' ');
}

/** The engine the documents table was created with (by the migration, see chooseMysqlFulltextEngine). */
export async function documentsTableEngine(dataSource: DataSource): Promise<MysqlFulltextEngine> {
  const rows: Array<{ ENGINE: string }> = await dataSource.query(
    `SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`,
    [DOCUMENTS_TABLE],
  );
  return rows[0]?.ENGINE?.toLowerCase() === 'mroonga' ? 'Mroonga' : 'InnoDB';
}

/**
 * MySQL/MariaDB FULLTEXT, BOOLEAN MODE, on a Mroonga or InnoDB table. One MATCH over every text column
 * finds the matches; the columns' own MATCH scores, summed with the column weights, are the relevance.
 * On Mroonga query words never escalate to partial matches (mroonga_match_escalation_threshold = -1
 * for the statement). The documents table holds text and ranking attributes together: no join.
 */
export class MysqlFulltextSearchEngine implements SearchEngine {
  readonly label: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly engine: MysqlFulltextEngine,
  ) {
    this.label = engine === 'Mroonga' ? 'MySQL/MariaDB Mroonga FULLTEXT' : 'MySQL/MariaDB InnoDB FULLTEXT';
  }

  async upsert(documents: SearchDocument[]): Promise<void> {
    for (let start = 0; start < documents.length; start += DOCUMENTS_PER_INSERT) {
      const rows = [
        ...new Map(
          documents
            .slice(start, start + DOCUMENTS_PER_INSERT)
            .map((document) => [document.packageId, documentRow(document)]),
        ).values(),
      ];
      const columns = `${DOCUMENT_COLUMNS}, ${ALL_TEXT}`;
      const updates = columns
        .split(', ')
        .filter((column) => column !== 'package_id')
        .map((column) => `${column} = VALUES(${column})`)
        .join(', ');
      await this.dataSource.query(
        `INSERT INTO ${DOCUMENTS_TABLE} (${columns}) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON DUPLICATE KEY UPDATE ${updates}`,
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
          ...row.text,
        ]),
      );
    }
  }

  async remove(packageId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM ${DOCUMENTS_TABLE} WHERE package_id = ?`, [packageId]);
  }

  async setDownloads(packageId: string, totalDownloads: number): Promise<void> {
    const update = downloadsUpdate(packageId, totalDownloads);
    await this.dataSource.query(update.sql, update.parameters);
  }

  async setPublisherVerified(publisherId: string, verified: boolean): Promise<void> {
    const update = verificationUpdate(publisherId, verified, 'DIV');
    await this.dataSource.query(update.sql, update.parameters);
  }

  /** The relevance expression: each column's MATCH score times its weight, summed. */
  private relevance(against: string): { sql: string; parameters: string[] } {
    return {
      sql: `(${TEXT_COLUMNS.map((column, index) => `${WEIGHTS[index]} * MATCH(${column}) AGAINST (? IN BOOLEAN MODE)`).join(' + ')})`,
      parameters: TEXT_COLUMNS.map(() => against),
    };
  }

  /** Mroonga would otherwise read a word it does not hold as a partial (prefix or infix) match. */
  private statement(sql: string): string {
    return this.engine === 'Mroonga' ? `SET STATEMENT mroonga_match_escalation_threshold = -1 FOR ${sql}` : sql;
  }

  async search(query: EngineQuery): Promise<EnginePage> {
    const filters = filtersSql('', query);
    const sources: string[] = [];
    const parameters: Array<string | number> = [];
    const attributes = 'package_id, name_lower, total_downloads, multiplier';
    if (query.terms.length > 0) {
      const against = booleanModeQuery(query.terms);
      const relevance = this.relevance(against);
      sources.push(
        `SELECT ${attributes}, ${relevance.sql} AS relevance FROM ${DOCUMENTS_TABLE}
         WHERE MATCH(${ALL_TEXT}) AGAINST (? IN BOOLEAN MODE) AND ${filters.sql}`,
      );
      parameters.push(...relevance.parameters, against);
      parameters.push(...filters.parameters);
    }
    if (query.name) {
      // Named packages the words match are the first branch's: each package is one row, without a GROUP BY
      // over every match (which cost 40 % more on a word held by 74,000 packages).
      const unmatched = query.terms.length > 0 ? `AND NOT MATCH(${ALL_TEXT}) AGAINST (? IN BOOLEAN MODE)` : '';
      sources.push(
        `SELECT ${attributes}, 0 AS relevance FROM ${DOCUMENTS_TABLE}
         WHERE name_lower >= ? AND name_lower < ? ${unmatched} AND ${filters.sql}`,
      );
      parameters.push(query.name, prefixUpperBound(query.name));
      if (query.terms.length > 0) parameters.push(booleanModeQuery(query.terms));
      parameters.push(...filters.parameters);
    }
    if (sources.length === 0) return { ids: [], total: 0 };
    const matches = sources.join(' UNION ALL ');
    const tier = tierSql('m.name_lower', query.name);
    const rows: Array<{ id: string; total: number | string }> = await this.dataSource.query(
      this.statement(
        `SELECT m.package_id AS id, COUNT(*) OVER () AS total FROM (${matches}) m
         ORDER BY ${tier.sql} m.relevance * m.multiplier DESC, m.total_downloads DESC, m.name_lower ASC
         LIMIT ? OFFSET ?`,
      ),
      [...parameters, ...tier.parameters, query.limit, query.offset],
    );
    if (rows.length > 0 || query.offset === 0)
      return { ids: rows.map((row) => row.id), total: Number(rows[0]?.total ?? 0) };
    const [{ total }] = await this.dataSource.query(
      this.statement(`SELECT COUNT(*) AS total FROM (${matches}) m`),
      parameters,
    );
    return { ids: [], total: Number(total) };
  }

  async suggest(query: EngineSuggest): Promise<string[]> {
    const visible = visibleSql('', query.viewerPublisherId);
    const order = 'ORDER BY total_downloads DESC, name_lower ASC LIMIT ?';
    const branches: string[] = [];
    const parameters: Array<string | number> = [];
    const columns = 'name, name_lower, total_downloads';
    if (query.name) {
      branches.push(
        `(SELECT ${columns}, 1 AS whole FROM ${DOCUMENTS_TABLE}
          WHERE name_lower >= ? AND name_lower < ? AND ${visible.sql} ${order})`,
      );
      parameters.push(query.name, prefixUpperBound(query.name), ...visible.parameters, query.limit);
    }
    if (query.wordPrefix) {
      // Names that start with the text are the first branch's, so each name is listed once.
      const notWhole = query.name ? 'AND NOT (name_lower >= ? AND name_lower < ?)' : '';
      branches.push(
        `(SELECT ${columns}, 0 AS whole FROM ${DOCUMENTS_TABLE}
          WHERE MATCH(${TEXT_COLUMNS[0]}) AGAINST (? IN BOOLEAN MODE) ${notWhole} AND ${visible.sql} ${order})`,
      );
      parameters.push(booleanModeQuery([{ term: query.wordPrefix, prefix: true }]));
      if (query.name) parameters.push(query.name, prefixUpperBound(query.name));
      parameters.push(...visible.parameters, query.limit);
    }
    if (branches.length === 0) return [];
    const rows: Array<{ name: string }> = await this.dataSource.query(
      this.statement(
        `SELECT name FROM (${branches.join(' UNION ALL ')}) u ORDER BY whole DESC, total_downloads DESC, name_lower ASC LIMIT ?`,
      ),
      [...parameters, query.limit],
    );
    return rows.map((row) => row.name);
  }

  async matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const against = booleanModeQuery(terms);
    const relevance = this.relevance(against);
    const rows: Array<{ id: string; relevance: number | string }> = await this.dataSource.query(
      this.statement(
        `SELECT package_id AS id, ${relevance.sql} AS relevance FROM ${DOCUMENTS_TABLE}
         WHERE MATCH(${ALL_TEXT}) AGAINST (? IN BOOLEAN MODE)`,
      ),
      [...relevance.parameters, against],
    );
    return new Map(rows.map((row) => [row.id, Number(row.relevance)]));
  }

  missingDocumentSql(): string {
    return `NOT EXISTS (SELECT 1 FROM ${DOCUMENTS_TABLE} sd WHERE sd.package_id = p.id)`;
  }
}
