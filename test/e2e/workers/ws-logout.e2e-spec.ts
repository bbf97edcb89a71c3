import { randomUUID } from 'node:crypto';
import { SessionToken } from '../../../src/auth/session-cookie/session-token.js';
import { backends } from '../../support/backends.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';
import { workerAccessToken } from '../../support/worker-under-test.js';
import { WsClient, spawnWorkerPair, type SpawnedWorker, type WorkerPair } from '../../support/ws-worker-under-test.js';

/**
 * A logout on an HTTP worker closes the WebSocket connections opened with what it ended, on a WS worker in
 * another process: the revocation is announced through the broker (Redis on MySQL + Redis, the parent's IPC
 * relay without Redis; this test process plays the worker manager's part).
 */
describe.each(backends())('WebSocket connections end with their session ($name)', (backend) => {
  const clients: WsClient[] = [];
  let http: SpawnedWorker;
  let ws: SpawnedWorker;
  let pair: WorkerPair;

  beforeAll(async () => {
    pair = await spawnWorkerPair(backend);
    ({ ws, http } = pair);
  });

  afterEach(() => {
    clients.splice(0).forEach((client) => client.close());
  });

  afterAll(async () => {
    await pair?.stop();
  });

  const logout = (headers: Record<string, string>) =>
    fetch(`${http.baseUrl}/web/logoutS`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: '{}',
    });

  it('closes a connection opened with a bearer token with 4001 when that token logs out', async () => {
    const token = workerAccessToken({ id: 'usr_ws_bearer', username: 'bearer' });
    const client = new WsClient(`${ws.wsUrl}/ws/chat/room?token=${token}`);
    clients.push(client);
    await client.connected();
    const bystander = new WsClient(
      `${ws.wsUrl}/ws/chat/room?token=${workerAccessToken({ id: 'usr_ws_other', username: 'other' })}`,
    );
    clients.push(bystander);
    await bystander.connected();

    const answer = await logout({ authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(await client.closedWith()).toEqual({ code: 4001, reason: 'Session ended' });
    expect(bystander.closed).toBeNull();
  });

  it('closes a connection opened with a session cookie with 4001 when that session logs out', async () => {
    const session = new SessionToken(TEST_SECRET).sign({
      user_id: 'usr_ws_cookie',
      session_id: randomUUID(),
      user_name: 'cookie',
      level: 1,
      email: null,
      login_id: randomUUID(),
      iat: Date.now() / 1000,
      exp: Math.floor(Date.now() / 1000) + 3600,
    });
    const cookie = `tb_session=${encodeURIComponent(session)}`;
    const client = new WsClient(`${ws.wsUrl}/ws/chat/room`, { headers: { cookie } });
    clients.push(client);
    await client.connected();

    const answer = await logout({ cookie });
    expect(answer.status).toBe(200);
    expect(await client.closedWith()).toEqual({ code: 4001, reason: 'Session ended' });
  });
});
