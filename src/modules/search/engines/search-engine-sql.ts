import {
  documentText,
  popularityBoost,
  prefixUpperBound,
  rankingMultiplier,
  verificationFactor,
  type QueryTerm,
} from '../search-terms.js';
import { DOCUMENTS_TABLE } from './search-schema.js';
import type { EngineQuery, SearchDocument } from './search-engine.js';

/** SQL pieces both database engines share (the documents table's columns are the same on both). */

/** Which documents a viewer may find: public, and its own publisher's private ones; never unlisted. */
export function visibleSql(alias: string, viewerPublisherId: string | null): { sql: string; parameters: string[] } {
  const prefix = alias ? `${alias}.` : '';
  if (!viewerPublisherId) return { sql: `${prefix}visibility = 'public'`, parameters: [] };
  return {
    sql: `(${prefix}visibility = 'public' OR (${prefix}publisher_id = ? AND ${prefix}visibility = 'private'))`,
    parameters: [viewerPublisherId],
  };
}

/** Visibility and the package type filter. */
export function filtersSql(alias: string, query: Pick<EngineQuery, 'viewerPublisherId' | 'packageType'>) {
  const visible = visibleSql(alias, query.viewerPublisherId);
  const conditions = [visible.sql];
  const parameters: Array<string | number> = [...visible.parameters];
  if (query.packageType) {
    conditions.push(`${alias ? `${alias}.` : ''}package_type = ?`);
    parameters.push(query.packageType);
  }
  return { sql: conditions.join(' AND '), parameters };
}

/** The ORDER BY term of the name tiers: 2 for the exact name, 1 for names starting with it, else 0. */
export function tierSql(column: string, name: string | null): { sql: string; parameters: string[] } {
  if (!name) return { sql: '', parameters: [] };
  return {
    sql: `CASE WHEN ${column} = ? THEN 2 WHEN ${column} >= ? AND ${column} < ? THEN 1 ELSE 0 END DESC,`,
    parameters: [name, name, prefixUpperBound(name)],
  };
}

/** The row a document is stored as (text columns and the ranking attributes). */
export function documentRow(document: SearchDocument) {
  const text = documentText(document);
  return {
    packageId: document.packageId,
    name: document.name,
    nameLower: document.name.toLowerCase(),
    visibility: document.visibility,
    publisherId: document.publisherId,
    packageType: document.packageType,
    totalDownloads: document.totalDownloads,
    verified: document.verified ? 1 : 0,
    multiplier: rankingMultiplier(document.totalDownloads, document.verified),
    text: [text.nameWords, text.displayWords, text.keywordWords, text.descriptionWords] as const,
  };
}

/** Query words are letters and digits only (search-terms.ts words), so they carry no operator. */
export function assertPlainWord(term: QueryTerm): string {
  if (!/^[\p{L}\p{N}]+$/u.test(term.term)) throw new Error(`not a plain query word: ${term.term}`);
  return term.term;
}

export const DOCUMENT_COLUMNS =
  'package_id, name, name_lower, visibility, publisher_id, package_type, total_downloads, verified, multiplier';

/** Rows written per multi-row INSERT (well below both engines' placeholder limits). */
export const DOCUMENTS_PER_INSERT = 500;

/** A package's download count on its document: the tie-break, and the popularity boost in its multiplier. */
export function downloadsUpdate(packageId: string, totalDownloads: number) {
  return {
    sql: `UPDATE ${DOCUMENTS_TABLE} SET total_downloads = ?, multiplier = ? * (CASE WHEN verified = 1 THEN ? ELSE ? END)
       WHERE package_id = ? AND total_downloads <> ?`,
    parameters: [
      totalDownloads,
      popularityBoost(totalDownloads),
      verificationFactor(true),
      verificationFactor(false),
      packageId,
      totalDownloads,
    ],
  };
}

/**
 * A publisher's verification on its documents. multiplier = boost × factor, so the boost is the multiplier
 * divided by the old factor, exactly: `integerDivision` is the dialect's (`/` on SQLite's integers, `DIV` on MySQL).
 */
export function verificationUpdate(publisherId: string, verified: boolean, integerDivision: '/' | 'DIV') {
  const flag = verified ? 1 : 0;
  return {
    sql: `UPDATE ${DOCUMENTS_TABLE} SET multiplier = multiplier ${integerDivision} ? * ?, verified = ? WHERE publisher_id = ? AND verified <> ?`,
    parameters: [verificationFactor(!verified), verificationFactor(verified), flag, publisherId, flag],
  };
}
