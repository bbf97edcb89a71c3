import { request as httpRequest } from 'node:http';

/** What a hand-built request got: the status, the JSON body when there is one, and how long it took. */
export interface RawAnswer {
  status: number;
  json: any;
  elapsedMs: number;
}

/**
 * POSTs a hand-built body — all of it, or only a first part when `end` is false, keeping the connection open —
 * and resolves with the answer, or 'no answer' after `waitMs` (3 s unless set). Content-Length is the body's,
 * or `contentLength` when given; a body that is not ended and has no declared length is sent chunked.
 */
export function sendRaw(
  url: string | URL,
  options: {
    headers: Record<string, string>;
    body: Buffer | string;
    end?: boolean;
    contentLength?: number;
    waitMs?: number;
  },
): Promise<RawAnswer | 'no answer'> {
  const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
  const started = Date.now();
  return new Promise((resolve) => {
    const headers = { ...options.headers };
    if (options.end !== false || options.contentLength !== undefined) {
      headers['content-length'] = String(options.contentLength ?? body.length);
    }
    const req = httpRequest(url, { method: 'POST', headers });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('no answer');
    }, options.waitMs ?? 3000);
    req.on('error', () => undefined);
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        const elapsedMs = Date.now() - started;
        let json: any;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          json = undefined;
        }
        req.destroy();
        resolve({ status: response.statusCode ?? 0, json, elapsedMs });
      });
    });
    req.write(body);
    if (options.end !== false) req.end();
  });
}
