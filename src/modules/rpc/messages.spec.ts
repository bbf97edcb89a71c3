import { Result } from '../app-core/result.js';
import { RPC_ERROR, parseRequest, parseResponse, responseToResult } from './messages.js';

const text = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('RPC messages (seed 03 B)', () => {
  it('accepts a request and defaults args and kwargs', () => {
    expect(parseRequest(text({ type: 'request', call_id: 'c', module: 'm', function: 'f' }))).toEqual({
      ok: true,
      request: { type: 'request', call_id: 'c', module: 'm', function: 'f', args: [], kwargs: {} },
    });
  });

  it.each([
    ['{oops', null, 'JSON'],
    ['"text"', null, 'object'],
    [{ type: 'response', call_id: 'c', module: 'm', function: 'f' }, 'c', 'type'],
    [{ type: 'request', call_id: '', module: 'm', function: 'f' }, null, 'call_id'],
    [{ type: 'request', call_id: 7, module: 'm', function: 'f' }, null, 'call_id'],
    [{ type: 'request', call_id: 'c', function: 'f' }, 'c', 'module'],
    [{ type: 'request', call_id: 'c', module: 'a.b', function: 'f' }, 'c', 'module'],
    [{ type: 'request', call_id: 'c', module: 'm', function: '' }, 'c', 'function'],
    [{ type: 'request', call_id: 'c', module: 'm', function: 'f', args: 'x' }, 'c', 'args'],
    [{ type: 'request', call_id: 'c', module: 'm', function: 'f', kwargs: [] }, 'c', 'kwargs'],
  ])('answers 400 to %j', (message, callId, field) => {
    const parsed = parseRequest(text(message));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.callId).toBe(callId);
    expect(parsed.error.code).toBe(RPC_ERROR.BAD_REQUEST);
    expect(parsed.error.message).toContain(field);
  });

  it('rejects invalid UTF-8 as malformed', () => {
    const parsed = parseRequest(new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(parsed.ok).toBe(false);
  });

  it('reads responses and refuses what is not one', () => {
    expect(parseResponse(text({ type: 'response', call_id: 'c', result: 1, error: null }))).toEqual({
      type: 'response',
      call_id: 'c',
      result: 1,
      error: null,
    });
    expect(parseResponse(text({ type: 'request', call_id: 'c' }))).toBeUndefined();
    expect(parseResponse(text({ type: 'response', call_id: 'c', result: null, error: { code: 'x' } }))).toBeUndefined();
    expect(parseResponse(text('nope'))).toBeUndefined();
  });

  it('maps answers onto Results: data, 4xx as InputError, 5xx and function codes as InternalError', () => {
    const ok = responseToResult({ type: 'response', call_id: 'c', result: { a: 1 }, error: null }, 'm.f');
    expect(ok).toBeInstanceOf(Result);
    expect(ok.isError()).toBe(false);
    expect(ok.get()).toEqual({ a: 1 });
    const forbidden = responseToResult(
      { type: 'response', call_id: 'c', result: null, error: { code: 403, message: 'no' } },
      'm.f',
    );
    expect([forbidden.error, forbidden.info.exec_code, forbidden.info.help_text]).toEqual(['InputError', 403, 'no']);
    const failed = responseToResult(
      { type: 'response', call_id: 'c', result: null, error: { code: 500, message: 'failed', details: 'trace' } },
      'm.f',
    );
    expect([failed.error, failed.info.exec_code, failed.get()]).toEqual(['InternalError', 500, 'trace']);
    expect(failed.isError()).toBe(true);
  });
});
