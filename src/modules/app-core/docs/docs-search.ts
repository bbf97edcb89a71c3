/**
 * A light English stemmer: enough for `caching`, `cached`, `caches` and `cache` to meet
 * (suffixes -ing, -ed, -es, -s, then a final -e, when a stem of 3+ letters remains).
 */
export function stem(word: string): string {
  let result = word;
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (result.length - suffix.length >= 3 && result.endsWith(suffix) && !result.endsWith('ss')) {
      result = result.slice(0, -suffix.length);
      break;
    }
  }
  return result.length > 3 && result.endsWith('e') ? result.slice(0, -1) : result;
}

/** Search terms of a text: stemmed lower-case words, with camelCase and snake_case parts as extra terms. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const word of text.split(/[^\p{L}\p{N}_]+/u)) {
    if (word.length === 0) continue;
    tokens.push(stem(word.toLowerCase()));
    const parts = word.split(/_|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/).filter((part) => part.length > 0);
    if (parts.length > 1) for (const part of parts) tokens.push(stem(part.toLowerCase()));
  }
  return tokens;
}

export interface SearchField {
  text: string;
  /** Term-frequency multiplier: titles rank above body text. */
  weight: number;
}

interface Posting {
  document: number;
  frequency: number;
}

const K1 = 1.2;
const B = 0.75;

/**
 * BM25 over weighted fields (a title word counts `weight` times). Build once per index change;
 * a query costs one lookup per query term plus a sort of the matching documents.
 */
export class SearchIndex<T> {
  private readonly postings = new Map<string, Posting[]>();
  private readonly lengths: number[] = [];
  private averageLength = 0;

  constructor(
    private readonly documents: readonly T[],
    fieldsOf: (document: T) => SearchField[],
  ) {
    let totalLength = 0;
    documents.forEach((document, index) => {
      const frequencies = new Map<string, number>();
      let length = 0;
      for (const field of fieldsOf(document)) {
        for (const token of tokenize(field.text)) {
          frequencies.set(token, (frequencies.get(token) ?? 0) + field.weight);
          length += field.weight;
        }
      }
      this.lengths.push(length);
      totalLength += length;
      for (const [token, frequency] of frequencies) {
        let list = this.postings.get(token);
        if (!list) this.postings.set(token, (list = []));
        list.push({ document: index, frequency });
      }
    });
    this.averageLength = documents.length > 0 ? totalLength / documents.length : 0;
  }

  /** Documents matching at least one query word, best first, with their scores. */
  search(query: string, accept?: (document: T) => boolean): Array<{ document: T; score: number }> {
    const terms = [...new Set(tokenize(query))];
    const scores = new Map<number, number>();
    const count = this.documents.length;
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const inverse = Math.log(1 + (count - list.length + 0.5) / (list.length + 0.5));
      for (const { document, frequency } of list) {
        const normaliser = K1 * (1 - B + (B * this.lengths[document]) / (this.averageLength || 1));
        const score = (inverse * frequency * (K1 + 1)) / (frequency + normaliser);
        scores.set(document, (scores.get(document) ?? 0) + score);
      }
    }
    const results: Array<{ document: T; score: number }> = [];
    for (const [index, score] of scores) {
      const document = this.documents[index];
      if (!accept || accept(document)) results.push({ document, score });
    }
    return results.sort((first, second) => second.score - first.score);
  }
}
