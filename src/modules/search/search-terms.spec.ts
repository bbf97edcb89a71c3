import {
  QUERY_MAX_TERMS,
  TERM_MAX_LENGTH,
  documentText,
  nameWords,
  normalizeText,
  parseQuery,
  downloadsAboveBoost,
  popularityBoost,
  prefixUpperBound,
  rankingMultiplier,
  splitName,
  verificationFactor,
  words,
} from './search-terms.js';

describe('search terms', () => {
  it('lower-cases and strips accents so that Café and cafe are one word', () => {
    expect(words('Café CRÈME')).toEqual(['cafe', 'creme']);
  });

  it('keeps letters and digits of any script and splits on everything else', () => {
    expect(words('日本語 “quoted” my-mod v2.0')).toEqual(['日本語', 'quoted', 'my', 'mod', 'v2', '0']);
  });

  it('cuts words to 64 characters without splitting a surrogate pair', () => {
    const [word] = words('😀'.repeat(10) + 'a'.repeat(100));
    expect(word).toBe('a'.repeat(64));
    const [emojiLetters] = words('𝒜'.repeat(70));
    expect(Array.from(emojiLetters)).toHaveLength(64);
  });

  it('splits names on punctuation and camel case and adds the joined form', () => {
    expect(nameWords('CloudSync-utils')).toEqual(['cloud', 'sync', 'utils', 'cloudsync', 'cloudsyncutils']);
    expect(nameWords('XMLParser')).toEqual(['xml', 'parser', 'xmlparser']);
    expect(nameWords('cLoud-x')).toEqual(['c', 'loud', 'x', 'cloud', 'cloudx']);
    expect(nameWords('cloud-sync')).toEqual(['cloud', 'sync', 'cloudsync']);
  });

  it('writes each text column as normalized words, the joined name counted as a name word', () => {
    expect(
      documentText({
        name: 'My-CloudSync',
        displayName: 'Café Crème',
        description: 'Syncs “files”, fast.',
        keywords: ['Cloud Storage', 'sync'],
      }),
    ).toEqual({
      nameWords: 'my cloud sync cloudsync mycloudsync',
      displayWords: 'cafe creme',
      keywordWords: 'cloud storage sync',
      descriptionWords: 'syncs files fast',
    });
  });

  it('treats full-text operators and quotes as plain words or separators', () => {
    expect(parseQuery('"cloud" AND NEAR(x*, -y)').terms.map((term) => term.term)).toEqual(['cloud', 'near', 'x', 'y']);
  });

  it('offers the whole query as a name only when it could be one', () => {
    expect(parseQuery('  My-Mod ').name).toBe('my-mod');
    expect(parseQuery('cloud sync').name).toBeNull();
    expect(parseQuery('café').name).toBeNull();
  });

  it('matches only the last word as a prefix, and only when it has two characters or more', () => {
    expect(parseQuery('ab x').terms).toEqual([
      { term: 'ab', prefix: false },
      { term: 'x', prefix: false },
    ]);
    expect(parseQuery('x ab').terms).toEqual([
      { term: 'x', prefix: false },
      { term: 'ab', prefix: true },
    ]);
  });

  it('reads a last word followed by punctuation as finished, not as a prefix', () => {
    expect(parseQuery('cloud sync.').terms).toEqual([
      { term: 'cloud', prefix: false },
      { term: 'sync', prefix: false },
    ]);
  });

  it(`keeps at most ${QUERY_MAX_TERMS} distinct words of a long query`, () => {
    const query = Array.from({ length: 50 }, (_, index) => `word${index} word${index}`).join(' ');
    expect(parseQuery(query).terms).toHaveLength(QUERY_MAX_TERMS);
  });

  it('drops stop words from a query', () => {
    expect(parseQuery('the cloud of things').terms.map((term) => term.term)).toEqual(['cloud', 'things']);
  });

  it('bounds a prefix above every string that starts with it, in code point order', () => {
    const bound = prefixUpperBound('sea');
    for (const term of ['sea', 'search', 'sea😀', 'sea\uffff'])
      expect(term < bound || Buffer.compare(Buffer.from(term), Buffer.from(bound)) < 0).toBe(true);
    expect(Buffer.compare(Buffer.from('seb'), Buffer.from(bound))).toBeGreaterThan(0);
  });

  it('normalizes compatibility forms such as full-width letters', () => {
    expect(normalizeText('ＣＬＯＵＤ')).toBe('cloud');
  });

  it('raises the popularity boost by ten at each power of ten of downloads, in steps, from 100 up to 160', () => {
    expect(
      [0, 1, 2, 9, 10, 99, 100, 125, 126, 1_000, 10_000, 100_000, 999_999, 1_000_000, 50_000_000].map(popularityBoost),
    ).toEqual([100, 100, 103, 109, 110, 119, 120, 120, 121, 130, 140, 150, 159, 160, 160]);
  });

  it('knows the fewest downloads above each popularity boost (what a read in multiplier order can stop on)', () => {
    for (let boost = 100; boost < 160; boost += 1) {
      const above = downloadsAboveBoost(boost);
      // Fewer downloads never have a higher boost; this many have (several low steps share a count).
      expect(popularityBoost(above - 1)).toBeLessThanOrEqual(boost);
      expect(popularityBoost(above)).toBeGreaterThan(boost);
    }
    expect(downloadsAboveBoost(160)).toBe(Number.POSITIVE_INFINITY);
    expect(downloadsAboveBoost(99)).toBe(0);
  });

  it('multiplies relevance by the popularity boost and 1.2 for a verified publisher', () => {
    expect(verificationFactor(true) / verificationFactor(false)).toBe(1.2);
    expect(rankingMultiplier(1_000, true)).toBe(130 * 12);
    expect(rankingMultiplier(0, false)).toBe(100 * 10);
  });

  it('keeps the joined spelling of a name apart from its words, and none when the name is one word', () => {
    expect(splitName('CloudSync-utils')).toEqual({
      parts: ['cloud', 'sync', 'utils'],
      segments: ['cloudsync', 'utils'],
      joined: 'cloudsyncutils',
    });
    expect(splitName('tapir')).toEqual({ parts: ['tapir'], segments: ['tapir'], joined: null });
  });

  it('cuts a long joined name to the index column length', () => {
    const name = Array.from({ length: 20 }, (_, index) => `part${index}`).join('-');
    expect(splitName(name).joined).toHaveLength(TERM_MAX_LENGTH);
  });
});
