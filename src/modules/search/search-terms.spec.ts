import {
  FIELD_WEIGHTS,
  QUERY_MAX_TERMS,
  TERM_MAX_LENGTH,
  documentTerms,
  indexWeight,
  nameWords,
  normalizeText,
  parseQuery,
  popularityBoost,
  popularityBoostSql,
  prefixUpperBound,
  splitName,
  storedScore,
  verificationFactor,
  verificationFactorSql,
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
    expect(nameWords('CloudSync-utils')).toEqual(['cloud', 'sync', 'utils', 'cloudsyncutils']);
    expect(nameWords('XMLParser')).toEqual(['xml', 'parser', 'xmlparser']);
  });

  it('indexes the whole lower-cased name once, besides its words and their joined spelling', () => {
    const terms = documentTerms({ name: 'My-Mod', displayName: null, description: null, keywords: null });
    expect(terms).toEqual([
      { term: 'my-mod', field: 'n' },
      { term: 'my', field: 't' },
      { term: 'mod', field: 't' },
      { term: 'mymod', field: 'j' },
    ]);
  });

  it('leaves stop words out of descriptions and lists each word once per field', () => {
    const terms = documentTerms({
      name: 'x',
      displayName: 'The Viewer',
      description: 'The viewer of the viewer',
      keywords: ['viewer'],
    });
    expect(terms.filter((term) => term.field !== 'n' && term.field !== 't')).toEqual([
      { term: 'viewer', field: 'd' },
      { term: 'viewer', field: 'k' },
      { term: 'viewer', field: 's' },
    ]);
  });

  it('indexes the first 60 distinct words of a description, repeats and stop words aside', () => {
    const numbered = Array.from({ length: 80 }, (_, index) => `word${index}`);
    const description =
      `The ${numbered.slice(0, 30).join(' the ')} ${numbered.slice(0, 10).join(' ')} ${numbered.slice(30).join(' ')}`.repeat(
        50,
      );
    const terms = documentTerms({ name: 'x', displayName: null, description, keywords: null }).filter(
      (term) => term.field === 's',
    );
    expect(terms.map((term) => term.term)).toEqual(numbered.slice(0, 60));
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

  it('computes the same popularity boost in SQL', async () => {
    const { DataSource } = await import('typeorm');
    const dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    try {
      const samples = [
        0, 1, 2, 3, 4, 5, 9, 10, 11, 99, 100, 125, 126, 999, 1_000, 12_345, 100_000, 999_999, 1_000_000, 50_000_000,
      ];
      const rows: Array<{ boost: number }> = await dataSource.query(
        samples.map((downloads) => `SELECT ${popularityBoostSql(String(downloads))} AS boost`).join(' UNION ALL '),
      );
      expect(rows.map((row) => Number(row.boost))).toEqual(samples.map(popularityBoost));
    } finally {
      await dataSource.destroy();
    }
  });

  it('ranks a verified publisher 1.2 times higher, in SQL and in the stored score alike', async () => {
    expect(verificationFactor(true) / verificationFactor(false)).toBe(1.2);
    expect(storedScore(8, 130, true)).toBe(8 * 130 * verificationFactor(true));
    const { DataSource } = await import('typeorm');
    const dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    try {
      const rows: Array<{ factor: number }> = await dataSource.query(
        `SELECT ${verificationFactorSql('1 = 1')} AS factor UNION ALL SELECT ${verificationFactorSql('1 = 0')}`,
      );
      expect(rows.map((row) => Number(row.factor))).toEqual([verificationFactor(true), verificationFactor(false)]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('stores a whole-name row with weight 1 and a text row with its field weight', () => {
    expect(indexWeight('n')).toBe(1);
    expect(indexWeight('j')).toBe(FIELD_WEIGHTS.t);
    expect(indexWeight('s')).toBe(FIELD_WEIGHTS.s);
  });

  it('keeps the joined spelling of a name apart from its words, and none when the name is one word', () => {
    expect(splitName('CloudSync-utils')).toEqual({ parts: ['cloud', 'sync', 'utils'], joined: 'cloudsyncutils' });
    expect(splitName('tapir')).toEqual({ parts: ['tapir'], joined: null });
  });

  it('cuts a long joined name to the index column length', () => {
    const name = Array.from({ length: 20 }, (_, index) => `part${index}`).join('-');
    expect(splitName(name).joined).toHaveLength(TERM_MAX_LENGTH);
  });
});
