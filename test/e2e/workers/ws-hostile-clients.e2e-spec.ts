import { backends } from '../../support/backends.js';
import {
  WsClient,
  sessionCookieFor,
  startWsWorker,
  wsWorkerEnvironment,
  type WsWorkerUnderTest,
} from '../../support/ws-worker-under-test.js';

/** What a page of another site, or one client, can do to the WebSocket worker (docs/ws-worker.md). */
describe.each(backends())('WebSocket worker against hostile clients (%s)', (backend) => {
  let worker: WsWorkerUnderTest;
  let dispose: () => Promise<void>;
  const clients: WsClient[] = [];
  const user = { userId: 'usr_1', username: 'ada', level: 1 };

  const connect = (path: string, options: ConstructorParameters<typeof WsClient>[1] = {}) => {
    const client = new WsClient(`${worker.wsUrl}${path}`, options);
    clients.push(client);
    return client;
  };
  const metrics = async () => (await (await fetch(`${worker.baseUrl}/metrics`)).json()) as Record<string, number>;

  beforeAll(async () => {
    const environment = await wsWorkerEnvironment(backend, { CORS_ORIGINS: 'https://app.example.com' });
    dispose = environment.dispose;
    worker = await startWsWorker(environment.env);
  });

  afterEach(() => {
    clients.splice(0).forEach((client) => client.close());
  });

  afterAll(async () => {
    await worker?.close();
    await dispose?.();
  });

  describe('origins', () => {
    it("refuses a handshake from another site carrying the user's cookie with HTTP 403", async () => {
      const client = connect('/ws/chat/room', {
        origin: 'https://evil.example',
        headers: { cookie: sessionCookieFor(worker, user) },
      });
      await expect(client.connected()).rejects.toMatchObject({
        status: 403,
        body: { error: 'FORBIDDEN', message: expect.stringContaining('Origin https://evil.example') },
      });
    });

    it('refuses Origin null (a sandboxed iframe) with HTTP 403', async () => {
      const client = connect('/ws/chat/room', { origin: 'null', headers: { cookie: sessionCookieFor(worker, user) } });
      await expect(client.connected()).rejects.toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    });

    it('refuses a foreign origin before routing: an unknown handler is 403 too, not 404', async () => {
      const client = connect('/ws/chat/nope', { origin: 'https://evil.example' });
      await expect(client.connected()).rejects.toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } });
    });

    it("accepts a CORS_ORIGINS page with the user's cookie as that user", async () => {
      const client = connect('/ws/chat/room', {
        origin: 'https://app.example.com',
        headers: { cookie: sessionCookieFor(worker, user) },
      });
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({ session: { authenticated: true, user_id: 'usr_1' } });
    });

    it.each(['http://localhost:5173', 'http://127.0.0.1:8000', 'tauri://localhost'])(
      'accepts a page of %s, as the HTTP workers answer it',
      async (origin) => {
        const client = connect('/ws/chat/room', { origin });
        expect(await client.connected()).toMatch(/^[0-9a-f-]{36}$/);
      },
    );

    it('accepts the page of its own site: an Origin naming the Host the request was sent to', async () => {
      const client = connect('/ws/chat/room', {
        origin: 'https://toolbox.example',
        headers: { host: 'toolbox.example' },
      });
      expect(await client.connected()).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('accepts a client that sends no Origin (a script or an app)', async () => {
      const client = connect('/ws/chat/room', { headers: { cookie: sessionCookieFor(worker, user) } });
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({ session: { user_id: 'usr_1' } });
    });

    it('counts refused origins at GET /metrics', async () => {
      const before = await metrics();
      await expect(connect('/ws/chat/room', { origin: 'https://evil.example' }).connected()).rejects.toMatchObject({
        status: 403,
      });
      const after = await metrics();
      expect(after.refused_origin - before.refused_origin).toBe(1);
      expect(after.connections_total).toBe(before.connections_total);
    });
  });
});
