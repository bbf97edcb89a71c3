import { COLUMN_WEIGHTS, VERIFIED_FACTOR, popularityBoost, type QueryTerm } from '../search-terms.js';

/**
 * The pieces of the SQLite engine's top-k search (docs/search.md, "SQLite: reading in rank-key order"):
 * the rank key every FTS row is stored under, and bm25 computed in JS exactly as FTS5 computes it.
 */

/** FTS5's bm25 constants (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;
export const BM25_WEIGHTS = [
  COLUMN_WEIGHTS.name,
  COLUMN_WEIGHTS.displayName,
  COLUMN_WEIGHTS.keywords,
  COLUMN_WEIGHTS.description,
] as const;

/** The largest ranking multiplier: the capped popularity boost of a verified publisher's package. */
export const MAX_MULTIPLIER = popularityBoost(Number.MAX_SAFE_INTEGER) * VERIFIED_FACTOR;
/** Rank keys of one visibility class lie in [class × CLASS_SPAN, (class + 1) × CLASS_SPAN). */
export const CLASS_SPAN = 2 ** 42;
const MULTIPLIER_SPAN = 2 ** 32;
/** doc_id must fit under the multiplier part of the key. */
export const MAX_DOC_ID = MULTIPLIER_SPAN - 1;

export const VISIBILITY_CLASSES = { public: 0, private: 1, unlisted: 2 } as const;

export function visibilityClass(visibility: string): number {
  return visibility === 'public'
    ? VISIBILITY_CLASSES.public
    : visibility === 'private'
      ? VISIBILITY_CLASSES.private
      : VISIBILITY_CLASSES.unlisted;
}

/**
 * The FTS rowid of a document: visibility class, then the multiplier descending, then doc_id. Reading
 * matches in rowid order therefore reads the public ones from the highest multiplier down, which is
 * what lets a search stop once no unread match can enter the page.
 */
export function rankKey(docId: number, visibility: string, multiplier: number): number {
  if (!Number.isInteger(docId) || docId < 1 || docId > MAX_DOC_ID) throw new Error(`doc_id out of range: ${docId}`);
  if (!Number.isInteger(multiplier) || multiplier < 1 || multiplier > MAX_MULTIPLIER)
    throw new Error(`multiplier out of range: ${multiplier}`);
  return visibilityClass(visibility) * CLASS_SPAN + (MAX_MULTIPLIER + 1 - multiplier) * MULTIPLIER_SPAN + docId;
}

/** FTS5's row count and total token count, from its averages record (`<table>_data` id 1: varints). */
export function decodeAverages(block: Uint8Array): { rows: number; tokens: number } {
  const values: number[] = [];
  let offset = 0;
  while (offset < block.length) {
    let value = 0;
    for (let byte = 0; ; byte += 1) {
      const current = block[offset++];
      if (byte === 8) {
        value = value * 256 + current;
        break;
      }
      value = value * 128 + (current & 0x7f);
      if ((current & 0x80) === 0) break;
    }
    values.push(value);
  }
  return { rows: values[0] ?? 0, tokens: values.slice(1).reduce((sum, value) => sum + value, 0) };
}

/** Statistics of one query, as bm25 reads them: average document length and each phrase's idf. */
export interface Bm25Query {
  terms: readonly QueryTerm[];
  averageLength: number;
  idf: readonly number[];
}

/** FTS5's idf before the logarithm: (rows − hits + 0.5) / (hits + 0.5). The caller takes `ln` in SQLite (C's log). */
export function idfRatio(rows: number, hits: number): number {
  return (rows - hits + 0.5) / (hits + 0.5);
}

/** FTS5 clamps an idf at or below zero (a word in over half the rows) to 1e-6. */
export function clampIdf(logarithm: number): number {
  return logarithm <= 0 ? 1e-6 : logarithm;
}

/**
 * A strict upper bound of one phrase's bm25 term: idf × f(k1+1)/(f + k1(…)) < idf × (k1 + 1) for any
 * frequency and length. The tiny margin keeps it above the product's rounding.
 */
export function phraseBound(idf: number): number {
  return idf * (K1 + 1.0) * (1 + 1e-9);
}

/**
 * bm25 with column weights over a document's four text columns as stored: joined by tabs, each a list of
 * words separated by single spaces (FTS5's `ascii` tokenizer splits them exactly there), with the
 * document's word count (tokenCount, stored at indexing). FTS5's own formula in FTS5's order of
 * floating-point operations, so the result is the same double FTS5's `-bm25()` returns. Every idf is
 * positive (clampIdf), so the result is above 0 exactly when a query word occurs: what FTS5's MATCH
 * would answer. It scans the joined text once per query word (the ordered read's hot loop).
 */
export function bm25(query: Bm25Query, text: string, tokens: number): number {
  const { terms } = query;
  const firstTab = text.indexOf('\t');
  const secondTab = text.indexOf('\t', firstTab + 1);
  const thirdTab = text.indexOf('\t', secondTab + 1);
  let score = 0;
  const norm = K1 * (1 - B + (B * tokens) / query.averageLength);
  for (let index = 0; index < terms.length; index += 1) {
    const { term, prefix } = terms[index];
    // FTS5 adds the column weight once per occurrence (integers: the sum is exact in any order).
    let f = 0;
    let from = 0;
    for (;;) {
      const at = text.indexOf(term, from);
      if (at < 0) break;
      from = at + 1;
      // A word starts after a space or a tab (a column's start), and unless a prefix ends before one.
      const before = at === 0 ? 32 : text.charCodeAt(at - 1);
      if (before !== 32 && before !== 9) continue;
      const end = at + term.length;
      const after = end === text.length ? 32 : text.charCodeAt(end);
      if (!prefix && after !== 32 && after !== 9) continue;
      f += BM25_WEIGHTS[at < firstTab ? 0 : at < secondTab ? 1 : at < thirdTab ? 2 : 3];
    }
    score += query.idf[index] * ((f * (K1 + 1.0)) / (f + norm));
  }
  return score;
}

/** A document's length as bm25 reads it: the words of all its columns (stored with the document). */
export function tokenCount(columns: ReadonlyArray<string | null>): number {
  return columns.reduce((total, text) => total + (text ? wordCount(text) : 0), 0);
}

/** Words in a column: runs of non-space characters (the text is words joined by single spaces). */
function wordCount(text: string): number {
  let count = 0;
  let inWord = false;
  for (let index = 0; index < text.length; index += 1) {
    const space = text.charCodeAt(index) === 32;
    if (!space && !inWord) count += 1;
    inWord = !space;
  }
  return count;
}
