import { parseParameterSignature } from './parameter-names.js';

class Sample {
  plain(first: string, second = 'a, b', third?: number) {
    return [first, second, third];
  }
  /* a comment (with, parens) */ commented(/* x, */ value: number /* y */) {
    return value;
  }
  options({
    query,
    maxResults = 25,
    nested: { deep } = { deep: 1 },
  }: { query?: string; maxResults?: number; nested?: { deep: number } } = {}) {
    return [query, maxResults, deep];
  }
  rest(first: number, ...others: number[]) {
    return [first, others];
  }
  objectRest({ known, ...others }: Record<string, unknown>) {
    return [known, others];
  }
  none() {
    return 1;
  }
}

const signatureOf = (name: keyof Sample) =>
  parseParameterSignature(Sample.prototype[name] as (...args: any[]) => unknown);

describe('parseParameterSignature', () => {
  it('reads positional names past defaults containing commas', () => {
    expect(signatureOf('plain')).toEqual({
      names: ['first', 'second', 'third'],
      style: 'positional',
      acceptsAny: false,
    });
  });

  it('ignores comments', () => {
    expect(signatureOf('commented').names).toEqual(['value']);
  });

  it('reads the keys of a single destructured object parameter', () => {
    expect(signatureOf('options')).toEqual({
      names: ['query', 'maxResults', 'nested'],
      style: 'object',
      acceptsAny: false,
    });
  });

  it('marks a rest parameter as accepting anything', () => {
    expect(signatureOf('rest')).toEqual({ names: ['first'], style: 'positional', acceptsAny: true });
  });

  it('marks an object rest as accepting any keyword', () => {
    expect(signatureOf('objectRest')).toMatchObject({ names: ['known'], style: 'object', acceptsAny: true });
  });

  it('finds no parameters in an empty list', () => {
    expect(signatureOf('none').names).toEqual([]);
  });

  it('reads arrow functions', () => {
    expect(parseParameterSignature((alpha: number, beta: number) => alpha + beta).names).toEqual(['alpha', 'beta']);
  });
});
