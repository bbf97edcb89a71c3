import { QUERY_MAX_TERMS, documentTerms, nameWords, normalizeText, parseQuery, prefixUpperBound, words } from './search-terms.js';

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
    expect(nameWords('CloudSync-utils')).toEqual(['cloud', 'sync', 'utils', 'cloudsyncutils']);
    expect(nameWords('XMLParser')).toEqual(['xml', 'parser', 'xmlparser']);
  });

  it('indexes the whole lower-cased name once, besides its words', () => {
    const terms = documentTerms({ name: 'My-Mod', displayName: null, description: null, keywords: null });
    expect(terms).toEqual([
      { term: 'my-mod', field: 'n' },
      { term: 'my', field: 't' },
      { term: 'mod', field: 't' },
      { term: 'mymod', field: 't' },
    ]);
  });

  it('leaves stop words out of descriptions and lists each word once per field', () => {
    const terms = documentTerms({ name: 'x', displayName: 'The Viewer', description: 'The viewer of the viewer', keywords: ['viewer'] });
    expect(terms.filter((term) => term.field !== 'n' && term.field !== 't')).toEqual([
      { term: 'viewer', field: 'd' },
      { term: 'viewer', field: 'k' },
      { term: 'viewer', field: 's' },
    ]);
  });

  it('treats full-text operators and quotes as plain words or separators', () => {
    expect(parseQuery('"cloud" AND NEAR(x*, -y)').terms.map((term) => term.term)).toEqual(['cloud', 'near', 'x', 'y']);
  });

  it('offers the whole query as a name only when it could be one', () => {
    expect(parseQuery('  My-Mod ').name).toBe('my-mod');
    expect(parseQuery('cloud sync').name).toBeNull();
    expect(parseQuery('café').name).toBeNull();
  });

  it('matches one-letter words whole and longer ones as prefixes', () => {
    expect(parseQuery('x ab').terms).toEqual([
      { term: 'x', prefix: false },
      { term: 'ab', prefix: true },
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
    for (const term of ['sea', 'search', 'sea😀', 'sea\uffff']) expect(term < bound || Buffer.compare(Buffer.from(term), Buffer.from(bound)) < 0).toBe(true);
    expect(Buffer.compare(Buffer.from('seb'), Buffer.from(bound))).toBeGreaterThan(0);
  });

  it('normalizes compatibility forms such as full-width letters', () => {
    expect(normalizeText('ＣＬＯＵＤ')).toBe('cloud');
  });
});
