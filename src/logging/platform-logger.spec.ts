import { Writable } from 'node:stream';
import { PlatformLogger, type PlatformLoggerOptions } from './platform-logger.js';
import { runInRequestContext } from './request-context.js';

function collector(chunks: string[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
}

function capture(options: PlatformLoggerOptions = {}) {
  const chunks: string[] = [];
  const logger = new PlatformLogger({ format: 'json', ...options, destination: collector(chunks) });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.length > 0);
  return { logger, lines, records: () => lines().map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('PlatformLogger', () => {
  it('writes one JSON object per line with level, time, context and message', () => {
    const { logger, records } = capture();
    logger.log('listening on http://127.0.0.1:4025', 'Registry');
    expect(records()).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        pid: process.pid,
        context: 'Registry',
        msg: 'listening on http://127.0.0.1:4025',
      },
    ]);
  });

  it('carries the request id on every line logged while a request is handled, and none outside', async () => {
    const { logger, records } = capture();
    await runInRequestContext('req-42', async () => {
      logger.warn('slow query', 'Search');
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.error('upload failed', 'Registry');
    });
    logger.log('idle', 'Queue');
    expect(records().map((record) => record.request_id)).toEqual(['req-42', 'req-42', undefined]);
  });

  it('drops lines below LOG_LEVEL', () => {
    const { logger, records } = capture({ level: 'warn' });
    logger.log('started', 'App');
    logger.debug('details', 'App');
    logger.warn('disk almost full', 'Storage');
    logger.error('gone', 'Storage');
    expect(records().map((record) => record.level)).toEqual(['warn', 'error']);
  });

  it('logs debug lines at the debug level', () => {
    const { logger, records } = capture({ level: 'debug' });
    logger.debug('cache miss', 'Search');
    expect(records()).toEqual([expect.objectContaining({ level: 'debug', msg: 'cache miss' })]);
  });

  it("hides Nest's module and route dumps unless DEBUG is on", () => {
    const quiet = capture();
    const verbose = capture({ debug: true });
    for (const { logger } of [quiet, verbose]) {
      logger.log('AppModule dependencies initialized', 'InstanceLoader');
      logger.log('Mapped {/api/v1/packages, GET} route', 'RouterExplorer');
      logger.log('Nest application successfully started', 'NestApplication');
    }
    expect([quiet.lines().length, verbose.records().map((record) => record.context)]).toEqual([
      0,
      ['InstanceLoader', 'RouterExplorer', 'NestApplication'],
    ]);
  });

  it('keeps errors from the framework contexts even without DEBUG', () => {
    const { logger, records } = capture();
    logger.error('port in use', undefined, 'NestApplication');
    expect(records()).toEqual([
      expect.objectContaining({ level: 'error', context: 'NestApplication', msg: 'port in use' }),
    ]);
  });

  it('puts the stack Nest passes to error() in err.stack', () => {
    const { logger, records } = capture();
    logger.error('handler raised', 'Error: boom\n    at handler', 'ExceptionsHandler');
    expect(records()[0]).toEqual(
      expect.objectContaining({
        msg: 'handler raised',
        context: 'ExceptionsHandler',
        err: { stack: 'Error: boom\n    at handler' },
      }),
    );
  });

  it('logs an Error with its message and stack', () => {
    const { logger, records } = capture();
    logger.error(new Error('disk gone'), 'Storage');
    expect(records()[0]).toEqual(
      expect.objectContaining({
        msg: 'disk gone',
        err: expect.objectContaining({ message: 'disk gone', stack: expect.stringContaining('Error: disk gone') }),
      }),
    );
  });

  it('writes readable lines in the pretty format', () => {
    const { logger, lines } = capture({ format: 'pretty' });
    runInRequestContext('req-7', () => logger.warn('disk almost full', 'Storage'));
    expect(lines()[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: \[Storage\] disk almost full$/);
    expect(lines().join('\n')).toContain('request_id: "req-7"');
  });

  it('chooses JSON when the destination is not a terminal', () => {
    const chunks: string[] = [];
    new PlatformLogger({ destination: collector(chunks) }).log('hello', 'App');
    expect(JSON.parse(chunks.join(''))).toEqual(expect.objectContaining({ msg: 'hello' }));
  });
});
