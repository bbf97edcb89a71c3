import { SessionCookies } from '../../../src/auth/session-cookie/session-cookies.js';
import { backends } from '../../support/backends.js';
import { declaredRouteAccess } from '../../support/route-access.js';
import {
  WsClient,
  sessionCookieFor,
  startWsWorker,
  tokenWithLevel,
  wsWorkerEnvironment,
  type WsWorkerUnderTest,
} from '../../support/ws-worker-under-test.js';

/** The WebSocket worker over a real server: routing, authentication, levels, limits, channels, health. */
describe.each(backends())('WebSocket worker (%s)', (backend) => {
  let worker: WsWorkerUnderTest;
  let dispose: () => Promise<void>;
  const clients: WsClient[] = [];

  const connect = (path: string, options: ConstructorParameters<typeof WsClient>[1] = {}) => {
    const client = new WsClient(`${worker.wsUrl}${path}`, options);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const environment = await wsWorkerEnvironment(backend, {
      WS_MAX_CONNECTIONS: '20',
      WS_MAX_MESSAGE_BYTES: '4096',
      // Every slot open to anonymous connections: the limits test below is about WS_MAX_CONNECTIONS alone (the
      // per-client limits and the share kept for signed-in users: ws-hostile-clients.e2e-spec.ts).
      WS_ANONYMOUS_MAX_PERCENT: '100',
    });
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

  describe('routing', () => {
    it('greets a connection with {type: "connected", conn_id}', async () => {
      const client = connect('/ws/chat/room');
      const connId = await client.connected();
      expect(connId).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('routes each message to the handler of /ws/{Module}/{handler} and sends back its answer', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send({ action: 'echo', data: { n: 1 } });
      expect(await client.next()).toEqual({ echo: { n: 1 } });
    });

    it('handles the messages of one connection in arrival order, a slow one before a fast one', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send({ action: 'slow_echo', delay: 150, data: 'first' });
      client.send({ action: 'echo', data: 'second' });
      expect([await client.next(), await client.next()]).toEqual([{ echo: 'first' }, { echo: 'second' }]);
    });

    it('passes a frame that is not JSON to the handler as text', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send('plain words');
      expect(await client.next()).toEqual({ echo: 'plain words' });
    });

    it('routes /ws/{handler} when one module registers the name', async () => {
      const client = connect('/ws/room');
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({ handler: 'chat/room' });
    });

    it('refuses an unknown handler with HTTP 404 before the handshake', async () => {
      const client = connect('/ws/chat/nope');
      await expect(client.connected()).rejects.toMatchObject({ status: 404 });
    });

    it('answers a handler error with an error frame and keeps the connection', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send({ action: 'throw' });
      expect(await client.next()).toEqual({ type: 'error', code: 'HANDLER_ERROR', message: 'on_message failed' });
      client.send({ action: 'echo', data: 'still here' });
      expect(await client.next()).toEqual({ echo: 'still here' });
    });

    it('answers plain GET /health with 200 without a handshake', async () => {
      const response = await fetch(`${worker.baseUrl}/health`);
      expect([response.status, ((await response.json()) as { status: string }).status]).toEqual([200, 'ok']);
    });
  });

  describe('authentication and levels', () => {
    const user = { userId: 'usr_1', username: 'ada' };

    it('treats a connection without credentials as anonymous (level 0)', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({
        session: { authenticated: false, user_id: null, level: 0 },
        caller: { level: 0, userId: null, transport: 'ws' },
      });
    });

    it('authenticates from the tb_session cookie', async () => {
      const client = connect('/ws/chat/room', { headers: { cookie: sessionCookieFor(worker, { ...user, level: 1 }) } });
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({
        session: { authenticated: true, user_id: 'usr_1', user_name: 'ada', level: 1 },
        caller: { level: 1, userId: 'usr_1', transport: 'ws' },
      });
    });

    it('authenticates from a platform JWT in the token query parameter', async () => {
      const client = connect(`/ws/chat/room?token=${tokenWithLevel({ userId: 'usr_2', level: 2 })}`);
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({ session: { authenticated: true, user_id: 'usr_2', level: 2 } });
    });

    it('authenticates from a session token in the token query parameter', async () => {
      const cookie = sessionCookieFor(worker, { ...user, level: 1 });
      const client = connect(`/ws/chat/room?token=${cookie.slice(cookie.indexOf('=') + 1)}`);
      await client.connected();
      client.send({ action: 'whoami' });
      expect(await client.next()).toMatchObject({ session: { authenticated: true, user_id: 'usr_1', level: 1 } });
    });

    it('closes with 1008 when the token is invalid, even for a public handler', async () => {
      const client = connect(`/ws/chat/room?token=${tokenWithLevel({ userId: 'usr_2', level: 1 })}x`);
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('closes with 1008 when the session cookie was tampered with', async () => {
      const cookie = sessionCookieFor(worker, { ...user, level: 1 });
      const client = connect('/ws/chat/room', {
        headers: { cookie: cookie.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A')) },
      });
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('closes with 1008 when the session was ended (logout)', async () => {
      const sessions = worker.app.get(SessionCookies);
      const issued = sessions.issue({ ...user, level: 1 });
      await sessions.revoke({ sessionId: issued.sessionId, expiresAt: issued.expiresAt });
      const client = connect('/ws/chat/room', {
        headers: { cookie: `${sessions.cookieName}=${encodeURIComponent(issued.token)}` },
      });
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('closes with 1008 when a bad token comes with a valid session cookie', async () => {
      const client = connect(`/ws/chat/room?token=${tokenWithLevel({ userId: 'usr_2', level: 1 }, -10)}`, {
        headers: { cookie: sessionCookieFor(worker, { ...user, level: 1 }) },
      });
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('closes with 1008 when the token has expired', async () => {
      const client = connect(`/ws/chat/room?token=${tokenWithLevel({ userId: 'usr_2', level: 1 }, -10)}`);
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    // Handler level × caller level: -1 only for admins, else admin or a level at least the required one.
    const combinations: Array<[string, number, number | null, boolean]> = [];
    for (const [handler, required] of [
      ['room', 0],
      ['members', 1],
      ['trusted', 2],
      ['admin', -1],
    ] as const) {
      for (const level of [null, 0, 1, 2, -1]) {
        const allowed = level === -1 || (required !== -1 && (level ?? 0) >= required);
        combinations.push([handler, required, level, allowed]);
      }
    }

    it.each(combinations)(
      'handler %s (level %i) with caller level %p: allowed %p',
      async (handler, _required, level, allowed) => {
        const query = level === null ? '' : `?token=${tokenWithLevel({ userId: `usr_${level}`, level })}`;
        const client = connect(`/ws/chat/${handler}${query}`);
        if (allowed) {
          await client.connected();
          client.send({ action: 'whoami' });
          expect(await client.next()).toBeDefined();
        } else {
          const closed = await client.closedWith();
          expect(closed.code).toBe(1008);
          expect(closed.reason).toBe(level === null ? 'Unauthorized' : 'Forbidden: insufficient access level');
        }
      },
    );

    it('closes with 1008 an anonymous connection to a handler of a module that is not open', async () => {
      const client = connect('/ws/vault/lounge');
      expect(await client.closedWith()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('lets any session into a level-0 handler of a module that is not open', async () => {
      const client = connect(`/ws/vault/lounge?token=${tokenWithLevel({ userId: 'usr_0', level: 0 })}`);
      await client.connected();
      client.send('hi');
      expect(await client.next()).toEqual({ lounge: 'usr_0' });
    });

    it('lets an anonymous connection into a handler whose name starts with open', async () => {
      const client = connect('/ws/vault/open_lounge');
      await client.connected();
      client.send('hi');
      expect(await client.next()).toEqual({ open_lounge: null });
    });

    it('runs nested app calls as the connection caller: anonymous cannot reach a level-1 function', async () => {
      const anonymous = connect('/ws/chat/room');
      await anonymous.connected();
      anonymous.send({ action: 'run', module: 'chat', function: 'secret' });
      expect(await anonymous.next()).toMatchObject({ error: 'InputError', info: { exec_code: 403 } });

      const member = connect(`/ws/chat/room?token=${tokenWithLevel({ userId: 'usr_m', level: 1 })}`);
      await member.connected();
      member.send({ action: 'run', module: 'chat', function: 'secret' });
      expect(await member.next()).toMatchObject({ error: 'none', result: { data: 'the secret' } });
    });
  });

  describe('channels', () => {
    it('broadcasts to the members of a channel and not to others', async () => {
      const [a, b, outsider] = [connect('/ws/chat/room'), connect('/ws/chat/room'), connect('/ws/chat/room')];
      const [idA] = await Promise.all([a.connected(), b.connected(), outsider.connected()]);
      a.send({ action: 'join', channel: 'news' });
      b.send({ action: 'join', channel: 'news' });
      await a.next((frame) => (frame as { joined?: string }).joined === 'news');
      await b.next((frame) => (frame as { joined?: string }).joined === 'news');
      a.send({ action: 'say', channel: 'news', text: 'hello' });
      const expected = { from: idA, text: 'hello' };
      expect(await a.next()).toEqual(expected);
      expect(await b.next()).toEqual(expected);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(outsider.frames).toEqual([]);
    });

    it('excludes the sender when asked', async () => {
      const [a, b] = [connect('/ws/chat/room'), connect('/ws/chat/room')];
      await Promise.all([a.connected(), b.connected()]);
      a.send({ action: 'say_others', channel: 'lobby', text: 'psst' });
      expect(await b.next()).toMatchObject({ text: 'psst' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(a.frames).toEqual([]);
    });

    it('stops delivering a channel after leave', async () => {
      const [a, b] = [connect('/ws/chat/room'), connect('/ws/chat/room')];
      await Promise.all([a.connected(), b.connected()]);
      b.send({ action: 'leave', channel: 'lobby' });
      await b.next((frame) => (frame as { left?: string }).left === 'lobby');
      a.send({ action: 'say', channel: 'lobby', text: 'anyone?' });
      await a.next((frame) => (frame as { text?: string }).text === 'anyone?');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(b.frames).toEqual([]);
    });

    it('sends to one connection by id and closes one by id', async () => {
      const [a, b] = [connect('/ws/chat/room'), connect('/ws/chat/room')];
      const [idA, idB] = await Promise.all([a.connected(), b.connected()]);
      a.send({ action: 'send_to', conn_id: idB, text: 'just you' });
      expect(await b.next()).toEqual({ direct: 'just you', from: idA });
      a.send({ action: 'kick', conn_id: idB });
      expect(await b.closedWith()).toEqual({ code: 4000, reason: 'kicked' });
    });

    it('broadcasts to every connection with broadcastAll', async () => {
      const [a, b] = [
        connect('/ws/chat/room'),
        connect('/ws/chat/members?token=' + tokenWithLevel({ userId: 'u', level: 1 })),
      ];
      await Promise.all([a.connected(), b.connected()]);
      a.send({ action: 'all', text: 'everyone' });
      expect(await a.next()).toEqual({ all: 'everyone' });
      expect(await b.next()).toEqual({ all: 'everyone' });
    });
  });

  describe('metrics', () => {
    it('counts connections, messages, handler errors and refusals at GET /metrics', async () => {
      const read = async () =>
        (await (await fetch(`${worker.baseUrl}/metrics`)).json()) as Record<string, number | string>;
      const before = await read();
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send({ action: 'throw' });
      await client.next();
      await expect(connect('/ws/chat/nope').connected()).rejects.toMatchObject({ status: 404 });
      await connect('/ws/chat/members').closedWith();
      await connect(`/ws/chat/admin?token=${tokenWithLevel({ userId: 'u', level: 1 })}`).closedWith();
      const after = await read();
      expect(after).toMatchObject({
        worker_id: expect.stringMatching(/^ws_[0-9a-f]{8}$/),
        broker: backend.name === 'sqlite' ? 'local' : 'redis',
        pid: process.pid,
      });
      const grew = (key: string) => Number(after[key]) - Number(before[key]);
      expect(
        [
          'connections_total',
          'messages_received',
          'handler_errors',
          'refused_not_found',
          'refused_unauthorized',
          'refused_forbidden',
        ].map(grew),
      ).toEqual([1, 1, 1, 1, 1, 1]);
    });
  });

  describe('HTTP routes', () => {
    it('declares every plain HTTP route public (access is decided per WebSocket handler)', () => {
      const PUBLIC = 'session-cookie|jwt: public';
      expect(declaredRouteAccess(worker.app)).toEqual({
        'GET /health': PUBLIC,
        'GET /api/v1/health': PUBLIC,
        'HEAD /health': PUBLIC,
        'HEAD /api/v1/health': PUBLIC,
        'GET /ready': PUBLIC,
        'GET /api/v1/ready': PUBLIC,
        'GET /metrics': PUBLIC,
        'GET /api/ping': PUBLIC,
        'GET /api/geo': PUBLIC,
      });
    });
  });

  describe('OpenAPI', () => {
    it('documents the plain HTTP routes with typed responses at /api/docs-json', async () => {
      const document = (await (await fetch(`${worker.baseUrl}/api/docs-json`)).json()) as {
        paths: Record<string, { get?: { responses: Record<string, { content?: unknown }> } }>;
        components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
      };
      expect(document.paths['/metrics'].get?.responses['200'].content).toEqual({
        'application/json': { schema: { $ref: '#/components/schemas/WsWorkerMetricsDto' } },
      });
      expect(Object.keys(document.components.schemas.WsWorkerMetricsDto.properties ?? {})).toEqual(
        expect.arrayContaining(['connections', 'messages_received', 'refused_overloaded']),
      );
      expect(document.paths['/health'].get?.responses['200'].content).toBeDefined();
    });
  });

  describe('limits', () => {
    it('closes a connection that sends a message over the size limit with 1009', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send('x'.repeat(4097));
      expect((await client.closedWith()).code).toBe(1009);
    });

    it('accepts a message at the size limit', async () => {
      const client = connect('/ws/chat/room');
      await client.connected();
      client.send('y'.repeat(4096));
      expect(await client.next()).toEqual({ echo: 'y'.repeat(4096) });
    });

    it('closes connections beyond the connection limit with 1013', async () => {
      const open = Array.from({ length: 20 }, () => connect('/ws/chat/room'));
      await Promise.all(open.map((client) => client.connected()));
      const extra = connect('/ws/chat/room');
      expect(await extra.closedWith()).toEqual({ code: 1013, reason: 'Server overloaded' });
      open[0].close();
      await open[0].closedWith();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const again = connect('/ws/chat/room');
      expect(await again.connected()).toBeDefined();
    });
  });
});
