import { CLIENT_LOG_MAX_ENTRIES, CLIENT_LOG_MAX_MESSAGE, parseClientLogs } from './client-logs.js';

describe('parseClientLogs', () => {
  it('takes {logs: [...]}, an array, or one entry', () => {
    expect(parseClientLogs({ logs: [{ level: 'warn', message: 'a' }] })).toEqual({
      entries: [{ level: 'warn', message: 'a', timestamp: null, source: null }],
      dropped: 0,
    });
    expect(parseClientLogs(['plain'])).toMatchObject({ entries: [{ level: 'info', message: 'plain' }] });
    expect(parseClientLogs({ level: 'FATAL', msg: 'down', logger: 'ui' })).toMatchObject({
      entries: [{ level: 'error', message: 'down', source: 'ui' }],
    });
    expect(typeof parseClientLogs({ something: 'else' })).toBe('string');
    expect(typeof parseClientLogs('text')).toBe('string');
  });

  it('bounds the count and the message length, and neutralises control characters', () => {
    const many = Array.from({ length: CLIENT_LOG_MAX_ENTRIES + 5 }, (_, index) => ({ message: `m${index}` }));
    const parsed = parseClientLogs(many);
    expect(typeof parsed !== 'string' && [parsed.entries.length, parsed.dropped]).toEqual([CLIENT_LOG_MAX_ENTRIES, 5]);
    const long = parseClientLogs([{ message: 'x'.repeat(CLIENT_LOG_MAX_MESSAGE + 10) }]);
    expect(typeof long !== 'string' && long.entries[0].message.length).toBe(CLIENT_LOG_MAX_MESSAGE + 1);
    const forged = parseClientLogs([{ message: 'ok\n[Nest] 1 - ERROR forged\u001b[31m' }]);
    expect(typeof forged !== 'string' && forged.entries[0].message).toBe('ok [Nest] 1 - ERROR forged [31m');
  });

  it('serialises a non-string message as JSON', () => {
    expect(parseClientLogs([{ message: { code: 1 } }])).toMatchObject({ entries: [{ message: '{"code":1}' }] });
  });
});
