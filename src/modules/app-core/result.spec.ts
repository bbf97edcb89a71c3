import { Result } from './result.js';

describe('Result', () => {
  it('serialises ok() to the platform wire shape', () => {
    expect(JSON.parse(JSON.stringify(Result.ok({ a: 1 })))).toEqual({
      error: 'none',
      origin: null,
      result: { data_to: 'native', data_info: '', data: { a: 1 }, data_type: 'object' },
      info: { exec_code: 0, help_text: 'OK' },
    });
  });

  it('gives each constructor its data type', () => {
    expect(Result.json([1]).result.data_type).toBe('json');
    expect(Result.text('x').result.data_type).toBe('text');
    expect(Result.html('<p>').result.data_type).toBe('html');
    expect(Result.binary(new Uint8Array([1])).result.data_type).toBe('binary');
    expect(Result.file('abc', 'a.txt', 'text/plain').result).toMatchObject({
      data_type: 'file',
      data_info: 'a.txt',
      data: { filename: 'a.txt', content_type: 'text/plain' },
    });
    expect(Result.redirect('/x').get()).toEqual({ url: '/x', status_code: 302 });
    expect(Result.stream([1, 2]).result.data_type).toBe('stream');
  });

  it('makes defaultUserError an InputError with exec_code -3', () => {
    const result = Result.defaultUserError('bad');
    expect([result.error, result.info.exec_code, result.info.help_text]).toEqual(['InputError', -3, 'bad']);
  });

  it('makes defaultInternalError an InternalError with exec_code -2', () => {
    const result = Result.defaultInternalError('boom');
    expect([result.error, result.info.exec_code]).toEqual(['InternalError', -2]);
  });

  it('makes error() a CustomError with the given code and data', () => {
    const result = Result.error('nope', 418, { data: { why: 'teapot' } });
    expect([result.error, result.info.exec_code, result.get('why')]).toEqual(['CustomError', 418, 'teapot']);
  });

  it('treats kind none as not an error', () => {
    expect(Result.ok(1).isError()).toBe(false);
  });

  it('treats exec_code 0 or 200 as not an error whatever the kind', () => {
    expect(Result.error('x', 0).isError()).toBe(false);
    expect(Result.error('x', 200).isError()).toBe(false);
    expect(Result.error('x', 500).isError()).toBe(true);
  });

  it('answers isError for a nested Result', () => {
    expect(Result.ok(Result.defaultUserError('inner')).isError()).toBe(true);
  });

  it('returns a data member by key and the fallback when missing', () => {
    const result = Result.ok({ name: 'x' });
    expect(result.get('name')).toBe('x');
    expect(result.get('missing', 'fallback')).toBe('fallback');
  });

  it('returns the whole data without a key and the fallback for null data', () => {
    expect(Result.ok([1, 2]).get()).toEqual([1, 2]);
    expect(Result.ok(null).get(undefined, 7)).toBe(7);
  });

  it('round-trips through the wire shape', () => {
    const original = Result.error('denied', 403, {
      kind: 'InputError',
      data: { a: [1] },
      dataInfo: 'info',
      origin: ['m', 'f'],
    });
    const rebuilt = Result.fromWire(JSON.parse(JSON.stringify(original)));
    expect(rebuilt.toJSON()).toEqual(original.toJSON());
    expect(rebuilt).toBeInstanceOf(Result);
  });

  it('rebuilds nested wire Results as Results', () => {
    const rebuilt = Result.fromWire(JSON.parse(JSON.stringify(Result.ok(Result.text('inner')))));
    expect(rebuilt.result.data).toBeInstanceOf(Result);
    expect(rebuilt.get()).toBe('inner');
  });

  it('refuses to rebuild objects that are not Results', () => {
    expect(() => Result.fromWire({ error: 'weird', result: {}, info: {} })).toThrow(TypeError);
  });
});
