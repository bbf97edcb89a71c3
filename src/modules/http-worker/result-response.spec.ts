import { Result } from '../app-core/index.js';
import { contentDisposition, errorStatusOf, sseEvent } from './result-response.js';

describe('errorStatusOf', () => {
  it('uses an exec_code that is an HTTP error status, else 400 for InputError and 500 otherwise', () => {
    expect(errorStatusOf(Result.error('x', 418))).toBe(418);
    expect(errorStatusOf(Result.defaultUserError('x', 404))).toBe(404);
    expect(errorStatusOf(Result.error('x', 503))).toBe(503);
    expect(errorStatusOf(Result.defaultUserError('bad kwargs', -3))).toBe(400);
    expect(errorStatusOf(Result.error('x', -1))).toBe(500);
    expect(errorStatusOf(Result.defaultInternalError('x', -2))).toBe(500);
    expect(errorStatusOf(Result.error('x', 302))).toBe(500);
    expect(errorStatusOf(Result.error('x', 600))).toBe(500);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name, never a quote that ends the header value', () => {
    expect(contentDisposition('a.txt')).toBe(`attachment; filename="a.txt"; filename*=UTF-8''a.txt`);
    expect(contentDisposition('ü "x".pdf')).toBe(
      `attachment; filename="_ _x_.pdf"; filename*=UTF-8''%C3%BC%20%22x%22.pdf`,
    );
  });
});

describe('sseEvent', () => {
  it('writes one data line per line, JSON for non-strings, and the event name', () => {
    expect(sseEvent('a\nb')).toBe('data: a\ndata: b\n\n');
    expect(sseEvent({ n: 1 }, 'tick')).toBe('event: tick\ndata: {"n":1}\n\n');
    expect(sseEvent(null)).toBe('data: null\n\n');
  });
});
