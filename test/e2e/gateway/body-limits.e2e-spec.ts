import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

const MiB = 1024 * 1024;

interface EarlyAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { error?: { type?: string; code?: string; message?: string } };
  /** Bytes of the body the client had written when the answer's head arrived. */
  sentWhenAnswered: number;
  /** When the connection closed: the bytes sent by then, and the milliseconds after the answer. */
  closed: Promise<{ sent: number; afterAnswerMs: number }>;
}

/**
 * Starts a POST that announces (or, chunked, would carry) a large body but sends only `sendBytes` of it, then
 * waits for the server to answer without sending the rest: a server that reads the body before answering
 * never answers, so the test's timeout shows it.
 */
function postPartially(
  baseUrl: string,
  path: string,
  options: {
    headers?: Record<string, string>;
    declaredBytes?: number;
    sendBytes: number;
    waitMs?: number;
    /** Go on sending after the answer, as a client that does not read while it uploads. */
    keepSending?: boolean;
  },
): Promise<EarlyAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    let answeredAt = 0;
    let markClosed: (closed: { sent: number; afterAnswerMs: number }) => void = () => undefined;
    const closed = new Promise<{ sent: number; afterAnswerMs: number }>((settle) => (markClosed = settle));
    const request = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      // Keep-alive, so that it is the server, not the client at the answer's end, that closes the connection.
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
      headers: {
        'content-type': 'application/json',
        ...(options.declaredBytes !== undefined ? { 'content-length': String(options.declaredBytes) } : {}),
        ...options.headers,
      },
    });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`no answer within ${options.waitMs ?? 5000} ms after ${sent} bytes sent`));
    }, options.waitMs ?? 5000);
    request.on('error', () => undefined);
    request.on('socket', (socket) =>
      socket.on('close', () => markClosed({ sent, afterAnswerMs: Date.now() - answeredAt })),
    );
    request.on('response', (response) => {
      answered = true;
      answeredAt = Date.now();
      clearTimeout(timer);
      const sentWhenAnswered = sent;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', () => undefined);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: (text ? JSON.parse(text) : {}) as EarlyAnswer['body'],
          sentWhenAnswered,
          closed,
        });
      });
    });
    request.write('{"model":"llama3.2","input":"');
    const piece = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while ((options.keepSending || !answered) && sent < options.sendBytes) {
        sent += piece.length;
        if (!request.write(piece)) return void request.once('drain', pump);
      }
    };
    pump();
  });
}

describe.each(backends())('gateway body limits ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let userKey: string;

  beforeAll(async () => {
    gateway = await startGateway(backend);
    const created = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
      email: 'limits@example.com',
      tier: 'sub',
    });
    const issued = await gateway.call<{ key: string }>('POST', `/admin/api/users/${created.body.id}/keys`, {
      name: 'limits',
    });
    userKey = issued.body.key;
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('answers a keyless 45 MB POST with 401 before the client has sent the body', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/chat/completions', {
      declaredBytes: 45 * MiB,
      sendBytes: 256 * 1024,
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
    expect(answer.sentWhenAnswered).toBeLessThanOrEqual(256 * 1024);
  });

  it('answers a 45 MB POST with a wrong key with 401 before reading it', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/embeddings', {
      headers: { authorization: 'Bearer sk-tb-not-a-key' },
      declaredBytes: 45 * MiB,
      sendBytes: 256 * 1024,
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
  });

  it('closes the connection of a refused upload soon after the answer, without reading the rest', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/chat/completions', {
      declaredBytes: 45 * MiB,
      // The client keeps sending after the answer: the server must cut it off instead of reading 45 MB.
      sendBytes: 45 * MiB,
      keepSending: true,
    });
    expect(answer.status).toBe(401);
    const closed = await answer.closed;
    expect(closed.sent).toBeLessThan(45 * MiB);
    expect(closed.afterAnswerMs).toBeLessThan(3000);
  });

  it('refuses a chat body over its cap with 413 from Content-Length, before reading it', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/chat/completions', {
      headers: { authorization: `Bearer ${userKey}` },
      declaredBytes: 45 * MiB,
      sendBytes: 256 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
    expect(answer.body.error?.message).toContain(String(gateway.config.gateway.chatBodyMaxBytes));
  });

  it('refuses a chunked chat body with 413 as soon as it passes the cap', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/chat/completions', {
      headers: { authorization: `Bearer ${userKey}` },
      sendBytes: gateway.config.gateway.chatBodyMaxBytes + 512 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error?.code).toBe('payload_too_large');
  });

  it('stops reading a chunked body refused while streaming and closes its connection', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/chat/completions', {
      headers: { authorization: `Bearer ${userKey}` },
      sendBytes: 45 * MiB,
      keepSending: true,
    });
    expect(answer.status).toBe(413);
    const closed = await answer.closed;
    expect(closed.sent).toBeLessThan(45 * MiB);
    expect(closed.afterAnswerMs).toBeLessThan(3000);
  });

  it('caps embeddings below chat: a 3 MiB embeddings body is 413', async () => {
    const answer = await postPartially(gateway.baseUrl, '/v1/embeddings', {
      headers: { authorization: `Bearer ${userKey}` },
      declaredBytes: 3 * MiB,
      sendBytes: 64 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error?.message).toContain(String(gateway.config.gateway.embeddingsBodyMaxBytes));
  });

  it('caps admin routes small: a 1 MiB config body with the admin key is 413', async () => {
    const answer = await postPartially(gateway.baseUrl, '/admin/api/models/load', {
      headers: { authorization: `Bearer ${gateway.adminKey}` },
      declaredBytes: MiB,
      sendBytes: 64 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error?.code).toBe('payload_too_large');
  });

  it('caps the public signup route small: a 1 MiB signup is 413', async () => {
    const answer = await postPartially(gateway.baseUrl, '/api/signup', { declaredBytes: MiB, sendBytes: 64 * 1024 });
    expect(answer.status).toBe(413);
    expect(answer.body.error?.code).toBe('payload_too_large');
  });

  it('still answers a chat with a 3 MiB data-URL image', async () => {
    const image = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(3 * MiB)]);
    const completion = await gateway.openai(userKey).chat.completions.create({
      model: 'llava',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0].message.content).toBe('I see 1 image(s)');
  });

  it('keeps a small JSON body working on the same connection pool after refusals', async () => {
    const models = await gateway.call<{ data: unknown[] }>('GET', '/v1/models', undefined, userKey);
    expect(models.status).toBe(200);
    const embeddings = await gateway.openai(userKey).embeddings.create({ model: 'nomic-embed-text', input: 'hi' });
    expect(embeddings.data[0].embedding).toHaveLength(8);
  });
});
