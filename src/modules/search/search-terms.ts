/**
 * The tokenizer behind the registry's search index. The same normalized terms are written to the
 * `package_search_terms` table and produced for a query, so matching is a plain comparison of
 * strings that SQLite and MySQL (binary collation) order the same way.
 */

/** Where a term was found; the letter is what the index stores. */
export const SEARCH_FIELDS = {
  /** The whole lower-cased package name: exact-name and name-prefix matches, autocomplete. */
  fullName: 'n',
  /** Words of the name (`my-cloud_sync` → my, cloud, sync). */
  nameWord: 't',
  /**
   * The name's words joined (`mycloudsync`), when that is not already one of them. A field of its
   * own because nearly every joined word is unique: kept apart, they do not crowd the real words
   * a query prefix expands to, and are read as one small range instead.
   */
  joinedName: 'j',
  displayName: 'd',
  keyword: 'k',
  description: 's',
} as const;

export type SearchField = (typeof SEARCH_FIELDS)[keyof typeof SEARCH_FIELDS];

/** Relevance of a match per field; an exact word counts double a prefix match. */
export const FIELD_WEIGHTS: Record<SearchField, number> = { n: 0, t: 8, j: 8, d: 6, k: 5, s: 2 };

/**
 * The weight stored on an index row. Whole-name rows get 1, so their stored score is the popularity
 * boost alone and orders name-prefix candidates by popularity.
 */
export function indexWeight(field: SearchField): number {
  return field === SEARCH_FIELDS.fullName ? 1 : FIELD_WEIGHTS[field];
}

/** A verified publisher's packages rank 1.2 times higher: 12 against 10, in integer arithmetic. */
export const VERIFIED_FACTOR = 12;
export const UNVERIFIED_FACTOR = 10;

export function verificationFactor(verified: boolean): number {
  return verified ? VERIFIED_FACTOR : UNVERIFIED_FACTOR;
}

/** verificationFactor in SQL, of a boolean SQL condition, so queries and stored scores share one arithmetic. */
export function verificationFactorSql(verifiedCondition: string): string {
  return `CASE WHEN ${verifiedCondition} THEN ${VERIFIED_FACTOR} ELSE ${UNVERIFIED_FACTOR} END`;
}

/**
 * The score an index row stores: field weight × popularity boost × verification factor, which for a
 * one-word query is the ranking itself, so a word's best rows in index order are its best matches.
 */
export function storedScore(weight: number, boost: number, verified: boolean): number {
  return weight * boost * verificationFactor(verified);
}

/**
 * Download thresholds of the popularity points 1…60: ten per power of ten (each about 26 % more
 * downloads than the one before), up to 1,000,000 downloads. Fine enough that packages a search
 * reads in stored-score order are, in practice, in the order of their downloads.
 */
const POPULARITY_STEPS = Array.from({ length: 60 }, (_, index) => Math.ceil(10 ** ((index + 1) / 10) - 1e-9));

/**
 * Popularity as an integer, 100 + ten times log10(downloads), capped at 160, so ranking is integer
 * arithmetic that orders ties the same way everywhere. It changes only when downloads cross a step.
 */
export function popularityBoost(totalDownloads: number): number {
  let points = 0;
  while (points < POPULARITY_STEPS.length && totalDownloads >= POPULARITY_STEPS[points]) points += 1;
  return 100 + points;
}

/** popularityBoost as an SQL expression over a downloads column (identical on SQLite and MySQL). */
export function popularityBoostSql(column: string): string {
  const branches: string[] = [];
  for (let points = POPULARITY_STEPS.length; points >= 1; points -= 1) {
    // Small thresholds repeat (2, 2, 2, 3, …): the highest points of a threshold is the one that applies.
    if (points < POPULARITY_STEPS.length && POPULARITY_STEPS[points] === POPULARITY_STEPS[points - 1]) continue;
    branches.push(`WHEN ${column} >= ${POPULARITY_STEPS[points - 1]} THEN ${100 + points}`);
  }
  return `(CASE ${branches.join(' ')} ELSE 100 END)`;
}

/** The index column holds 64 characters; longer words are cut the same way at index and query time. */
export const TERM_MAX_LENGTH = 64;
/** The documented maximum length of `q`; longer queries are refused with 422. */
export const QUERY_MAX_LENGTH = 1000;
/** Words past this many in one query are ignored: they bound the SQL, not the answer for honest queries. */
export const QUERY_MAX_TERMS = 8;
/** Shorter words only match whole words: a one-letter prefix would match most of the index. */
export const PREFIX_MIN_LENGTH = 2;
/** Descriptions are indexed up to this many distinct words (the rest adds rows, not findability). */
const DESCRIPTION_MAX_TERMS = 60;

/** Words too common to say anything about a package. */
const STOP_WORDS = new Set(
  'a an and are as at be by for from has in into is it its of on or that the this to was with you your'.split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;
const NAME_CHARACTERS = /^[a-z0-9._-]+$/;

export interface DocumentTerm {
  term: string;
  field: SearchField;
}

export interface SearchableDocument {
  name: string;
  displayName: string | null;
  description: string | null;
  keywords: readonly string[] | null;
}

export interface QueryTerm {
  term: string;
  /** Whether the word also matches longer words that start with it. */
  prefix: boolean;
}

export interface ParsedQuery {
  /** Lower-cased whole query, when it could be (the start of) a package name. */
  name: string | null;
  terms: QueryTerm[];
}

/** Lower case, compatibility-decomposed, accents removed: `Café` and `cafe` are one word. */
export function normalizeText(text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(MARKS, '');
}

/** Cuts by code point, never inside a surrogate pair (MySQL counts characters, not UTF-16 units). */
export function clip(term: string): string {
  if (term.length <= TERM_MAX_LENGTH) return term;
  return Array.from(term).slice(0, TERM_MAX_LENGTH).join('');
}

export function words(text: string | null | undefined): string[] {
  if (!text) return [];
  return (normalizeText(text).match(WORD) ?? []).map(clip);
}

/** `CloudSync-utils` → cloud, sync, utils and the joined `cloudsyncutils`, so both spellings find it. */
export function nameWords(name: string): string[] {
  const { parts, joined } = splitName(name);
  return joined ? [...parts, joined] : parts;
}

/** The name's words, and their concatenation when it is not one of them. */
export function splitName(name: string): { parts: string[]; joined: string | null } {
  const spaced = name.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  const parts = words(spaced);
  const joined = clip(words(name).join(''));
  return { parts: unique(parts), joined: joined && !parts.includes(joined) ? joined : null };
}

/** Every (term, field) pair of a package, each once. */
export function documentTerms(document: SearchableDocument): DocumentTerm[] {
  const seen = new Set<string>();
  const terms: DocumentTerm[] = [];
  const add = (term: string, field: SearchField) => {
    const key = `${field}:${term}`;
    if (!term || seen.has(key)) return;
    seen.add(key);
    terms.push({ term, field });
  };
  add(clip(document.name.toLowerCase()), SEARCH_FIELDS.fullName);
  const { parts, joined } = splitName(document.name);
  for (const term of parts) add(term, SEARCH_FIELDS.nameWord);
  if (joined) add(joined, SEARCH_FIELDS.joinedName);
  for (const term of words(document.displayName)) if (!STOP_WORDS.has(term)) add(term, SEARCH_FIELDS.displayName);
  for (const keyword of document.keywords ?? []) for (const term of words(keyword)) add(term, SEARCH_FIELDS.keyword);
  for (const term of firstDistinctWords(document.description, DESCRIPTION_MAX_TERMS))
    add(term, SEARCH_FIELDS.description);
  return terms;
}

/**
 * What a query asks for. Any text is acceptable: punctuation, quotes and operators of full-text
 * engines (`AND`, `NEAR`, `*`, `"`, `-`) are just separators or words here, never syntax.
 */
export function parseQuery(query: string): ParsedQuery {
  const trimmed = query.trim();
  const lowered = trimmed.toLowerCase();
  const name = lowered.length > 0 && lowered.length <= 100 && NAME_CHARACTERS.test(lowered) ? lowered : null;
  const all = unique(words(trimmed));
  const meaningful = all.filter((term) => !STOP_WORDS.has(term));
  const terms = meaningful
    .slice(0, QUERY_MAX_TERMS)
    .map((term) => ({ term, prefix: Array.from(term).length >= PREFIX_MIN_LENGTH }));
  return { name, terms };
}

/** The exclusive upper bound of every string that starts with `prefix`, in code point order. */
export function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/**
 * The first `limit` distinct words of a text that are not stop words, the same as
 * `unique(words(text)).filter(not a stop word).slice(0, limit)` without tokenizing the rest of a long
 * text (search ranks a few hundred package descriptions per query this way).
 */
function firstDistinctWords(text: string | null, limit: number): string[] {
  if (!text) return [];
  const found = new Set<string>();
  for (const match of normalizeText(text).matchAll(WORD)) {
    const term = clip(match[0]);
    if (STOP_WORDS.has(term)) continue;
    found.add(term);
    if (found.size >= limit) break;
  }
  return [...found];
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
