import { SearchIndex, stem, tokenize } from './docs-search.js';

describe('tokenize', () => {
  it('splits camelCase and snake_case words and keeps the whole word', () => {
    expect(tokenize('runFunction get_user')).toEqual(['runfunction', 'run', 'function', 'get_user', 'get', 'user']);
  });

  it('brings inflected forms to one stem', () => {
    expect(['cache', 'caching', 'cached', 'caches'].map(stem)).toEqual(['cach', 'cach', 'cach', 'cach']);
  });

  it('leaves short words and double s alone', () => {
    expect([stem('is'), stem('class'), stem('uses')]).toEqual(['is', 'class', 'use']);
  });
});

describe('SearchIndex', () => {
  const documents = [
    { title: 'Installing mods', body: 'Use the command line to install a registry package.' },
    { title: 'Caching', body: 'Functions may cache results in memory. Cache entries expire.' },
    { title: 'Registry', body: 'The registry stores packages. Mods are packages.' },
    { title: 'Unrelated', body: 'Nothing to see here.' },
  ];
  const index = new SearchIndex(documents, (document) => [
    { text: document.title, weight: 3 },
    { text: document.body, weight: 1 },
  ]);

  it('ranks a title match above a body match', () => {
    expect(index.search('registry').map((hit) => hit.document.title)).toEqual(['Registry', 'Installing mods']);
  });

  it('ranks documents matching more query words first', () => {
    expect(index.search('install mods').map((hit) => hit.document.title)[0]).toBe('Installing mods');
  });

  it('returns scores in decreasing order', () => {
    const scores = index.search('cache packages mods').map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((first, second) => second - first));
  });

  it('returns nothing for words no document has', () => {
    expect(index.search('kubernetes')).toEqual([]);
  });

  it('applies the filter', () => {
    expect(
      index.search('registry', (document) => document.title !== 'Registry').map((hit) => hit.document.title),
    ).toEqual(['Installing mods']);
  });
});
