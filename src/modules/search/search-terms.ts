/**
 * The tokenizer in front of the full-text engines (docs/search.md): a package's text is written to the
 * index as normalized words separated by spaces, and a query is cut into the same words, so SQLite
 * FTS5, Mroonga and InnoDB FULLTEXT all see identical tokens (accents and case already removed).
 */

/** Relevance weight per text column (bm25 column weights on FTS5, `*W` section weights on Mroonga). */
export const COLUMN_WEIGHTS = { name: 8, displayName: 6, keywords: 5, description: 2 } as const;

/** A verified publisher's packages rank 1.2 times higher: 12 against 10, in integer arithmetic. */
export const VERIFIED_FACTOR = 12;
export const UNVERIFIED_FACTOR = 10;

export function verificationFactor(verified: boolean): number {
  return verified ? VERIFIED_FACTOR : UNVERIFIED_FACTOR;
}

/** What a package's relevance is multiplied by: popularity boost × verification factor. */
export function rankingMultiplier(totalDownloads: number, verified: boolean): number {
  return popularityBoost(totalDownloads) * verificationFactor(verified);
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

/**
 * The fewest downloads a package with a popularity boost above `boost` has: every package whose boost
 * is at most `boost` has fewer. Infinity at the cap (160), which any count may reach.
 */
export function downloadsAboveBoost(boost: number): number {
  const points = Math.floor(boost) - 100;
  if (points < 0) return 0;
  return points < POPULARITY_STEPS.length ? POPULARITY_STEPS[points] : Number.POSITIVE_INFINITY;
}

/** Words are cut at 64 characters, the same way at index and query time. */
export const TERM_MAX_LENGTH = 64;
/** The documented maximum length of `q`; longer queries are refused with 422. */
export const QUERY_MAX_LENGTH = 1000;
/** Words past this many in one query are ignored: they bound the SQL, not the answer for honest queries. */
export const QUERY_MAX_TERMS = 8;
/** A shorter last word only matches whole words: a one-letter prefix would match most of the index. */
export const PREFIX_MIN_LENGTH = 2;
/** Words too common to say anything about a package. */
const STOP_WORDS = new Set(
  'a an and are as at be by for from has in into is it its of on or that the this to was with you your'.split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;
const NAME_CHARACTERS = /^[a-z0-9._-]+$/;

export interface SearchableDocument {
  name: string;
  displayName: string | null;
  description: string | null;
  keywords: readonly string[] | null;
}

export interface QueryTerm {
  term: string;
  /** Whether the word also matches longer words that start with it (the last word, as typed so far). */
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

/**
 * `CloudSync-utils` → cloud, sync, utils, the name's own segments (`cloudsync`, utils) and the joined
 * `cloudsyncutils`, so every spelling finds it. The segments (the name's runs of letters and digits,
 * lower-cased, not split at capitals) make a name's first word a word of it whatever its capitals: every
 * name starting with `cloud-` holds the word `cloud`, which lets a search prove its name range matched.
 */
export function nameWords(name: string): string[] {
  const { parts, segments, joined } = splitName(name);
  return unique([...parts, ...segments, ...(joined ? [joined] : [])]);
}

/** The name's words, its segments, and their concatenation when it is not one of them. */
export function splitName(name: string): { parts: string[]; segments: string[]; joined: string | null } {
  const spaced = name.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  const parts = unique(words(spaced));
  const segments = unique(words(name));
  const joined = clip(segments.length > 0 ? words(name).join('') : '');
  return { parts, segments, joined: joined && !parts.includes(joined) && !segments.includes(joined) ? joined : null };
}

/**
 * The word every name starting with `namePrefix` holds in its name column: a name's joined form (or its one
 * segment) is its letters and digits cut at 64 characters, so a name that starts with the prefix has a
 * joined form starting with the prefix's own letters and digits. Null when the prefix has none (`-`).
 */
export function joinedNamePrefix(namePrefix: string): string | null {
  return clip(words(namePrefix).join('')) || null;
}

/** The words of each text column, normalized and space-separated: what the full-text engines index. */
export interface DocumentText {
  /** The name's words and their joined form (`mycloudsync`), which counts as the name. */
  nameWords: string;
  displayWords: string;
  keywordWords: string;
  descriptionWords: string;
}

export function documentText(document: SearchableDocument): DocumentText {
  return {
    nameWords: nameWords(document.name).join(' '),
    displayWords: words(document.displayName).join(' '),
    keywordWords: (document.keywords ?? []).flatMap((keyword) => words(keyword)).join(' '),
    descriptionWords: words(document.description).join(' '),
  };
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
  const kept = meaningful.slice(0, QUERY_MAX_TERMS);
  // Only the last word is being typed: it matches longer words too, when it has 2+ characters.
  const lastTyped = /[\p{L}\p{N}]$/u.test(trimmed);
  const terms = kept.map((term, index) => ({
    term,
    prefix: index === kept.length - 1 && lastTyped && Array.from(term).length >= PREFIX_MIN_LENGTH,
  }));
  return { name, terms };
}

/** The exclusive upper bound of every string that starts with `prefix`, in code point order. */
export function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
