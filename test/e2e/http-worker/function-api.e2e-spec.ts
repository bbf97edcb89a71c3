import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { sendRaw } from '../../support/raw-request.js';
import { HttpWorkerTestModsModule } from '../../support/http-worker-test-mods.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

/** A response body as JSON (any: the suite checks its shape). */
const json = (response: Response): Promise<any> => response.json();

const openDescriptors = async () => (await readdir('/proc/self/fd')).length;

/** Sends the head of a multipart upload and part of its file, then drops the connection. */
function abortedUpload(address: string): Promise<void> {
  const boundary = 'tbabortboundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`;
  return new Promise((resolve) => {
    const req = httpRequest(address, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000' },
    });
    req.on('error', () => resolve());
    req.write(head);
    req.write(Buffer.alloc(512, 1), () =>
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50),
    );
  });
}

const BOUNDARY = 'tbfuzzboundary';
const fieldPart = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (name: string, content: string, extraHeaders = '') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="a.bin"\r\n${extraHeaders}\r\n${content}\r\n`;
const closing = `--${BOUNDARY}--\r\n`;

/**
 * Posts a hand-built multipart body (all of it, or only its start with the connection kept open) and resolves
 * with the status and exec_code of the answer, or 'no answer' after 3 s.
 */
async function postRaw(
  address: string,
  body: string,
  options: { contentType?: string; end?: boolean; contentLength?: number } = {},
): Promise<{ status: number; execCode: unknown; elapsedMs: number } | 'no answer'> {
  const { contentType, ...rest } = options;
  const answer = await sendRaw(address, {
    ...rest,
    body,
    headers: { 'content-type': contentType ?? `multipart/form-data; boundary=${BOUNDARY}` },
  });
  if (answer === 'no answer') return answer;
  return { status: answer.status, execCode: answer.json?.info?.exec_code, elapsedMs: answer.elapsedMs };
}

const USER = { id: 'usr_0123456789abcdef01234567', username: 'ada', level: 1 };

describe.each(backends())('HTTP worker /api/{module}/{function} ($name)', (backend) => {
  let worker: HttpWorkerUnderTest;
  let token: string;
  const url = (path: string) => `${worker.baseUrl}${path}`;
  const auth = () => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    worker = await startHttpWorker(
      backend,
      { OPEN_MODULES: 'Worker.Test', HTTP_UPLOAD_MAX_BYTES: '1024', HTTP_BODY_LIMIT_BYTES: '4096' },
      {
        imports: [HttpWorkerTestModsModule],
      },
    );
    token = worker.token(USER);
  });
  afterAll(() => worker?.close());

  describe('routing', () => {
    it('runs a function of a dotted module and answers the whole Result as JSON', async () => {
      const response = await fetch(url('/api/Worker.Test/hello'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(await json(response)).toEqual({
        error: 'none',
        origin: null,
        result: { data_to: 'native', data_info: '', data: 'hello', data_type: 'string' },
        info: { exec_code: 0, help_text: 'OK' },
      });
    });

    it('names itself <type>_<hex> when no worker id is given', async () => {
      expect((await json(await fetch(url('/health')))).worker_id).toMatch(/^http_[0-9a-f]{8}$/);
    });

    it('serves the built-in core functions registered with api: true', async () => {
      const response = await worker.api.get('/api/core/version', auth());
      expect(response.status).toBe(200);
      expect(response.body.result.data).toMatchObject({ app_id: 'toolbox-test' });
    });

    it('answers 404 for a function registered without api: true, an unknown one and a deeper path', async () => {
      for (const path of [
        '/api/Worker.Test/hidden',
        '/api/Worker.Test/nope',
        '/api/Nope/hello',
        '/api/Worker.Test/hello/x',
      ]) {
        const response = await worker.api.get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(response.body).toMatchObject({ error: 'InputError', info: { exec_code: 404 } });
      }
    });
  });

  describe('methods', () => {
    it('AUTO is GET and POST without parameters and POST with them; the other method is 405 with Allow', async () => {
      const putHello = await fetch(url('/api/Worker.Test/hello'), { method: 'PUT' });
      expect(putHello.status).toBe(405);
      expect(putHello.headers.get('allow')).toBe('GET, POST, HEAD');
      expect(await json(putHello)).toMatchObject({ info: { exec_code: 405 } });

      const getEcho = await fetch(url('/api/Worker.Test/echo?a=1'));
      expect(getEcho.status).toBe(405);
      expect(getEcho.headers.get('allow')).toBe('POST');
      expect((await fetch(url('/api/Worker.Test/echo?a=1'), { method: 'POST' })).status).toBe(200);
    });

    it('enforces explicit api_methods, PATCH included', async () => {
      expect((await fetch(url('/api/Worker.Test/put_only'), { method: 'PUT' })).status).toBe(200);
      expect((await fetch(url('/api/Worker.Test/put_only'), { method: 'DELETE' })).status).toBe(200);
      for (const method of ['GET', 'POST', 'PATCH']) {
        const response = await fetch(url('/api/Worker.Test/put_only'), { method });
        expect({ method, status: response.status }).toEqual({ method, status: 405 });
        expect(response.headers.get('allow')).toBe('PUT, DELETE');
      }
    });

    it('answers POST with an empty or a JSON {} body for a parameterless AUTO function', async () => {
      const empty = await fetch(url('/api/Worker.Test/hello'), { method: 'POST' });
      expect(empty.status).toBe(200);
      expect((await json(empty)).result.data).toBe('hello');
      const braces = await fetch(url('/api/Worker.Test/hello'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(braces.status).toBe(200);
      expect((await json(braces)).result.data).toBe('hello');
    });

    it('answers HEAD where GET is allowed', async () => {
      const response = await fetch(url('/api/Worker.Test/hello'), { method: 'HEAD' });
      expect(response.status).toBe(200);
    });
  });

  describe('keyword arguments', () => {
    it('takes query, then form, then JSON body fields, the later winning', async () => {
      const viaJson = await fetch(url('/api/Worker.Test/echo?a=query&b=query&c=query'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ b: 'json', c: { nested: true } }),
      });
      expect((await json(viaJson)).result.data).toEqual({ a: 'query', b: 'json', c: { nested: true } });

      const form = await fetch(url('/api/Worker.Test/echo?a=query&b=query'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'b=form&c=form',
      });
      expect((await json(form)).result.data).toEqual({ a: 'query', b: 'form', c: 'form' });

      const multipart = new FormData();
      multipart.append('b', 'multipart');
      const viaMultipart = await fetch(url('/api/Worker.Test/echo?a=query&b=query'), {
        method: 'POST',
        body: multipart,
      });
      expect((await json(viaMultipart)).result.data).toEqual({ a: 'query', b: 'multipart' });
    });

    it('never lets a field name reach the prototype of the arguments', async () => {
      const response = await fetch(url('/api/Worker.Test/echo?__proto__=q&constructor=q&a=1'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"__proto__": {"b": "polluted"}, "prototype": 1, "c": 2}',
      });
      expect(response.status).toBe(200);
      expect((await json(response)).result.data).toEqual({ a: '1', c: 2 });
      const form = new FormData();
      form.append('__proto__', 'x');
      form.append('b', 'ok');
      const multipart = await fetch(url('/api/Worker.Test/echo'), { method: 'POST', body: form });
      expect((await json(multipart)).result.data).toEqual({ b: 'ok' });
    });

    it('refuses a JSON or form body over HTTP_BODY_LIMIT_BYTES with 413', async () => {
      const big = 'x'.repeat(5000);
      const viaJson = await fetch(url('/api/Worker.Test/echo'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: big }),
      });
      expect(viaJson.status).toBe(413);
      const viaForm = await fetch(url('/api/Worker.Test/echo'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `a=${big}`,
      });
      expect(viaForm.status).toBe(413);
      expect(await json(viaForm)).toMatchObject({ error: 'InputError', info: { exec_code: 413 } });
    });

    it('makes a repeated query key an array', async () => {
      const response = await fetch(url('/api/Worker.Test/echo?a=1&a=2'), { method: 'POST' });
      expect((await json(response)).result.data).toEqual({ a: ['1', '2'] });
    });

    it('refuses an unknown keyword and a non-object JSON body with 400', async () => {
      const unknown = await fetch(url('/api/Worker.Test/echo?zzz=1'), { method: 'POST' });
      expect(unknown.status).toBe(400);
      expect(await json(unknown)).toMatchObject({
        error: 'InputError',
        info: { help_text: expect.stringContaining("'zzz'") },
      });
      const array = await fetch(url('/api/Worker.Test/echo'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[1,2]',
      });
      expect(array.status).toBe(400);
      const malformed = await fetch(url('/api/Worker.Test/echo'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":',
      });
      expect(malformed.status).toBe(400);
    });

    it('streams multipart files to disk, hands them to the function, and removes them after', async () => {
      const form = new FormData();
      form.append('note', 'see attached');
      form.append('file', new Blob(['first file']), 'a.txt');
      form.append('more', new Blob(['second'], { type: 'text/plain' }), 'b.txt');
      const response = await fetch(url('/api/Worker.Test/upload'), { method: 'POST', body: form });
      expect(response.status).toBe(200);
      const data = (await json(response)).result.data;
      expect(data.note).toBe('see attached');
      expect(data.file).toMatchObject({
        filename: 'a.txt',
        size: 10,
        text: 'first file',
        sha256: createHash('sha256').update('first file').digest('hex'),
      });
      expect(data.more).toMatchObject({ filename: 'b.txt', content_type: 'text/plain', size: 6, text: 'second' });
      expect(data.file.path.startsWith(worker.config.httpWorker.uploadDir)).toBe(true);
      // Removed once the answer is sent.
      const left = await eventually(
        () => readdir(worker.config.httpWorker.uploadDir),
        (names) => names.length === 0,
      );
      expect(left).toEqual([]);
    });

    it('settles an upload the client aborts mid-file: no file and no open descriptor stay behind', async () => {
      const before = await openDescriptors();
      for (let i = 0; i < 20; i += 1) await abortedUpload(url('/api/Worker.Test/upload'));
      const left = await eventually(
        () => readdir(worker.config.httpWorker.uploadDir),
        (names) => names.length === 0,
      );
      expect(left).toEqual([]);
      expect(await eventually(openDescriptors, (count) => count <= before + 2)).toBeLessThanOrEqual(before + 2);
      expect((await fetch(url('/api/Worker.Test/hello'))).status).toBe(200);
    });

    it('refuses a file over HTTP_UPLOAD_MAX_BYTES with 413 and keeps nothing', async () => {
      const form = new FormData();
      form.append('file', new Blob([Buffer.alloc(4096, 1)]), 'big.bin');
      const response = await fetch(url('/api/Worker.Test/upload'), { method: 'POST', body: form });
      expect(response.status).toBe(413);
      expect(await json(response)).toMatchObject({ error: 'InputError', info: { exec_code: 413 } });
      expect(await readdir(worker.config.httpWorker.uploadDir)).toEqual([]);
    });

    describe('malformed multipart', () => {
      const cases: Array<[string, string, { contentType?: string; end?: boolean; contentLength?: number }, number]> = [
        ['21 file parts', Array.from({ length: 21 }, () => filePart('file', 'x')).join('') + closing, {}, 400],
        ['a field over the body limit', fieldPart('note', 'x'.repeat(8192)) + closing, {}, 413],
        [
          'a field that never ends',
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${'x'.repeat(64 * 1024)}`,
          { end: false, contentLength: 1024 * 1024 },
          413,
        ],
        ['no boundary', fieldPart('note', 'x') + closing, { contentType: 'multipart/form-data' }, 400],
        ['a truncated body', fieldPart('note', 'x') + filePart('file', 'x').slice(0, -2), {}, 400],
        // This worker's body limit is 4 KiB: the text before the file part is over it before the header ends.
        ['a 20 KB part header', filePart('file', 'x', `X-Pad: ${'a'.repeat(20 * 1024)}\r\n`) + closing, {}, 413],
        [
          'a thousand tiny parts',
          Array.from({ length: 1000 }, (_, i) => fieldPart(`f${i}`, 'x')).join('') + closing,
          {},
          413,
        ],
      ];

      it.each(cases)('answers %s within a second and keeps nothing', async (_name, body, options, status) => {
        const answer = await postRaw(url('/api/Worker.Test/upload'), body, options);
        expect(answer).toEqual({ status, execCode: status, elapsedMs: expect.any(Number) });
        expect((answer as { elapsedMs: number }).elapsedMs).toBeLessThan(1000);
        const left = await eventually(
          () => readdir(worker.config.httpWorker.uploadDir).catch(() => []),
          (names) => names.length === 0,
          1000,
        );
        expect(left).toEqual([]);
      });
    });

    it('passes the request to a request_as_kwarg function, with the session', async () => {
      const anonymous = await fetch(url('/api/Worker.Test/whoami?extra=1'), { headers: { 'x-custom': 'yes' } });
      const seen = (await json(anonymous)).result.data;
      expect(seen.extra).toBe('1');
      expect(seen.request).toMatchObject({
        method: 'GET',
        path: '/api/Worker.Test/whoami',
        query: { extra: '1' },
        client_ip: '127.0.0.1',
        session: null,
      });
      expect(seen.request.headers['x-custom']).toBe('yes');
      expect(seen.request.request_id).toBe(anonymous.headers.get('x-request-id'));

      const posted = await fetch(url('/api/Worker.Test/whoami'), {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ extra: 'x' }),
      });
      const request = (await json(posted)).result.data.request;
      expect(request.body).toEqual({ extra: 'x' });
      expect(request.content_type).toBe('application/json');
      expect(request.files).toEqual({});
      expect(request.session).toMatchObject({ user_id: USER.id, user_name: 'ada', level: 1, via: 'jwt' });
    });
  });

  describe('Result → HTTP', () => {
    it('html', async () => {
      const response = await fetch(url('/api/Worker.Test/page'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toBe('<h1>Hi</h1>');
    });

    it('redirect with its status', async () => {
      const response = await fetch(url('/api/Worker.Test/go'), { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('/elsewhere?x=1');
    });

    it('file as an attachment with its content type and name', async () => {
      const response = await fetch(url('/api/Worker.Test/download'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(response.headers.get('content-disposition')).toBe(
        `attachment; filename="report _.txt"; filename*=UTF-8''report%20%C3%BC.txt`,
      );
      expect(await response.text()).toBe('report body');
    });

    it('binary as an octet-stream attachment', async () => {
      const response = await fetch(url('/api/Worker.Test/bytes'));
      expect(response.headers.get('content-type')).toBe('application/octet-stream');
      expect(response.headers.get('content-disposition')).toContain('filename="blob.bin"');
      expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([0, 1, 2, 255]);
    });

    it('stream as server-sent events, unbuffered', async () => {
      const response = await fetch(url('/api/Worker.Test/events'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('x-accel-buffering')).toBe('no');
      const text = await response.text();
      expect(text).toBe(
        'data: first\n\n' +
          'data: {"n":2}\n\n' +
          'data: multi\ndata: line\n\n' +
          `event: end\ndata: {"request_id":"${response.headers.get('x-request-id')}"}\n\n`,
      );
    });

    it('closes the source when the client goes away', async () => {
      const controller = new AbortController();
      const response = await fetch(url('/api/Worker.Test/endless'), { signal: controller.signal });
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('data: {"tick":0}');
      controller.abort();
      const closed = await eventually(
        async () => (await json(await fetch(url('/api/Worker.Test/endless_state')))).result.data as boolean,
        (state) => state,
      );
      expect(closed).toBe(true);
    });

    it('ends a failing stream with an error event carrying the request id', async () => {
      const response = await fetch(url('/api/Worker.Test/broken_stream'));
      const id = response.headers.get('x-request-id');
      expect(await response.text()).toBe(
        `data: one\n\nevent: error\ndata: {"message":"source failed","request_id":"${id}"}\n\n`,
      );
    });

    it('stream of another content type as chunked', async () => {
      const response = await fetch(url('/api/Worker.Test/ndjson'));
      expect(response.headers.get('content-type')).toBe('application/x-ndjson');
      expect(response.headers.get('transfer-encoding')).toBe('chunked');
      expect(await response.text()).toBe('{"n":1}\n{"n":2}\n');
    });

    it('an error Result: its exec_code when an HTTP status, else 500 with the request id', async () => {
      const teapot = await fetch(url('/api/Worker.Test/teapot'));
      expect(teapot.status).toBe(418);
      expect(await json(teapot)).toMatchObject({
        error: 'CustomError',
        info: { exec_code: 418, help_text: 'short and stout' },
      });

      const failing = await fetch(url('/api/Worker.Test/failing'));
      expect(failing.status).toBe(500);
      const body = await json(failing);
      expect(body).toMatchObject({ error: 'CustomError', info: { exec_code: -1 } });
      expect(body.request_id).toBe(failing.headers.get('x-request-id'));
    });

    it('a thrown error: 500 with a request id and no stack trace', async () => {
      const response = await fetch(url('/api/Worker.Test/boom'), { headers: { 'x-request-id': 'req-boom-1' } });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ error: 'InternalError', request_id: 'req-boom-1' });
      expect(text).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(text).not.toContain('function-runner');
    });
  });
});
