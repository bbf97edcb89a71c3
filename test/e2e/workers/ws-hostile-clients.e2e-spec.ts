import { networkInterfaces } from 'node:os';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import {
  WsClient,
  sessionCookieFor,
  startWsWorker,
  tokenWithLevel,
  wsWorkerEnvironment,
  type WsWorkerUnderTest,
} from '../../support/ws-worker-under-test.js';

/** This machine's first non-loopback IPv4 address: a peer that is no trusted proxy. */
const OUTSIDE_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;

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

/**
 * One client must not take every slot: limits per client address and per user, and a share kept for signed-in
 * users. The worker listens on every interface so that a peer that is no trusted proxy can be tested too.
 */
describe.each(backends())('WebSocket worker connection limits per client (%s)', (backend) => {
  let worker: WsWorkerUnderTest;
  let dispose: () => Promise<void>;
  const clients: WsClient[] = [];

  const connect = (path: string, options: ConstructorParameters<typeof WsClient>[1] = {}, base?: string) => {
    const client = new WsClient(`${base ?? worker.wsUrl}${path}`, options);
    clients.push(client);
    return client;
  };
  /** A connection of a client at `address`, as nginx on loopback forwards it. */
  const from = (address: string, options: { token?: string } = {}) =>
    connect(options.token ? `/ws/chat/room?token=${options.token}` : '/ws/chat/room', {
      headers: { 'x-forwarded-for': address },
    });
  const openAll = (list: WsClient[]) => Promise.all(list.map((client) => client.connected()));
  const userToken = (userId: string) => tokenWithLevel({ userId, level: 1 });
  const metrics = async () => (await (await fetch(`${worker.baseUrl}/metrics`)).json()) as Record<string, number>;

  beforeAll(async () => {
    const environment = await wsWorkerEnvironment(backend, {
      WS_WORKER_HOST: '0.0.0.0',
      // nginx on loopback forwards the client's address, as `tb workers start` configures its workers.
      TRUST_PROXY: 'loopback',
      WS_MAX_CONNECTIONS: '10',
      WS_MAX_CONNECTIONS_PER_IP: '3',
      WS_MAX_CONNECTIONS_PER_USER: '2',
      WS_ANONYMOUS_MAX_PERCENT: '50',
    });
    dispose = environment.dispose;
    worker = await startWsWorker(environment.env);
  });

  // Every test starts with no connection held: the slots are freed once the sockets are closed.
  afterEach(async () => {
    clients.splice(0).forEach((client) => client.close());
    await eventually(metrics, (counters) => counters.connections === 0, 5000);
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  afterAll(async () => {
    await worker?.close();
    await dispose?.();
  });

  it('closes the connection past WS_MAX_CONNECTIONS_PER_IP with 1008 and a reason naming the limit', async () => {
    await openAll([from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.1')]);
    expect(await from('203.0.113.1').closedWith()).toEqual({
      code: 1008,
      reason: 'Too many connections from this address (limit 3)',
    });
  });

  it('admits another address while one is at its limit', async () => {
    await openAll([from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.1')]);
    expect(await from('203.0.113.2').connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('counts an IPv6 client by its /64', async () => {
    await openAll([from('2001:db8:1:2::1'), from('2001:db8:1:2::2'), from('2001:db8:1:2::3')]);
    expect(await from('2001:db8:1:2:ffff::99').closedWith()).toMatchObject({ code: 1008 });
    expect(await from('2001:db8:1:3::1').connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("closes a user's connection past WS_MAX_CONNECTIONS_PER_USER with 1008, from any address", async () => {
    await openAll([from('203.0.113.1', { token: userToken('ada') }), from('203.0.113.2', { token: userToken('ada') })]);
    expect(await from('203.0.113.3', { token: userToken('ada') }).closedWith()).toEqual({
      code: 1008,
      reason: 'Too many connections for this user (limit 2)',
    });
    expect(await from('203.0.113.3', { token: userToken('bob') }).connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lets a signed-in user connect after one anonymous client tried to open WS_MAX_CONNECTIONS sockets', async () => {
    const flood = Array.from({ length: 10 }, () => from('203.0.113.66'));
    // Each either opens (the server greets it) or is closed with a code right after its handshake.
    const outcomes = await Promise.all(
      flood.map((client) =>
        Promise.race([client.connected().then(() => 'open'), client.closedWith().then(({ code }) => code)]),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'open')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === 1008)).toHaveLength(7);
    expect(await from('198.51.100.7', { token: userToken('ada') }).connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps the slots past WS_ANONYMOUS_MAX_PERCENT for signed-in users: anonymous get 1013, users still connect', async () => {
    await openAll(['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'].map((a) => from(a)));
    expect(await from('203.0.113.6').closedWith()).toEqual({
      code: 1013,
      reason: 'Server busy: the remaining connections are kept for signed-in users',
    });
    expect(await from('203.0.113.6', { token: userToken('ada') }).connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('frees the slot when a connection closes', async () => {
    const held = [from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.1')];
    await openAll(held);
    held[0].close();
    await held[0].closedWith();
    await eventually(metrics, (counters) => counters.connections === 2, 5000);
    expect(await from('203.0.113.1').connected()).toMatch(/^[0-9a-f-]{36}$/);
  });

  (OUTSIDE_ADDRESS ? it : it.skip)(
    'counts a peer that is no trusted proxy by its own address, whatever X-Forwarded-For it sends',
    async () => {
      const base = `ws://${OUTSIDE_ADDRESS}:${new URL(worker.wsUrl).port}`;
      const spoofing = (forwardedFor: string) =>
        connect('/ws/chat/room', { headers: { 'x-forwarded-for': forwardedFor } }, base);
      await openAll([spoofing('198.51.100.1'), spoofing('198.51.100.2'), spoofing('198.51.100.3')]);
      expect(await spoofing('198.51.100.4').closedWith()).toEqual({
        code: 1008,
        reason: 'Too many connections from this address (limit 3)',
      });
    },
  );

  it('counts the refusals per reason at GET /metrics', async () => {
    const before = await metrics();
    await openAll([from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.1')]);
    await from('203.0.113.1').closedWith();
    await openAll([from('203.0.113.2', { token: userToken('ada') }), from('203.0.113.3', { token: userToken('ada') })]);
    await from('203.0.113.4', { token: userToken('ada') }).closedWith();
    await openAll([from('203.0.113.5'), from('203.0.113.6')]);
    await from('203.0.113.7').closedWith();
    const after = await metrics();
    const grew = (key: string) => after[key] - before[key];
    expect(
      ['refused_per_address', 'refused_per_user', 'refused_anonymous_share', 'refused_overloaded'].map(grew),
    ).toEqual([1, 1, 1, 0]);
  });
});
