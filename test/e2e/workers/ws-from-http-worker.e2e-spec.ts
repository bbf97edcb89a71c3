import { backends } from '../../support/backends.js';
import {
  WsClient,
  spawnWorkerPair,
  tokenWithLevel,
  type SpawnedWorker,
  type WorkerPair,
} from '../../support/ws-worker-under-test.js';

/**
 * A function an HTTP worker runs reaches the connections of a WS worker in another process through the
 * broker (`app.ws`): Redis on MySQL + Redis, the parent's IPC relay without Redis (this test process plays
 * the worker manager's part).
 */
describe.each(backends())('WebSocket channels from an HTTP worker function (%s)', (backend) => {
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

  // kwargs from the query (POST: the functions' apiMethods).
  const call = (name: string, kwargs: Record<string, string>) =>
    fetch(`${http.baseUrl}/api/chat/${name}?${new URLSearchParams(kwargs)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenWithLevel({ userId: 'usr_ops', level: 1 })}` },
    });

  it('broadcasts from an HTTP worker function to the members of a channel on the WS worker', async () => {
    const [member, other] = [new WsClient(`${ws.wsUrl}/ws/chat/room`), new WsClient(`${ws.wsUrl}/ws/chat/room`)];
    clients.push(member, other);
    await Promise.all([member.connected(), other.connected()]);
    other.send({ action: 'leave', channel: 'lobby' });
    await other.next((frame) => (frame as { left?: string }).left === 'lobby');

    const response = await call('announce', { channel: 'lobby', text: 'deploy at noon' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ error: 'none', result: { data: { sent: true } } });
    expect(await member.next()).toEqual({ type: 'announce', text: 'deploy at noon' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(other.frames).toEqual([]);
  });

  it('sends from an HTTP worker function to one connection of the WS worker by its id', async () => {
    const [target, bystander] = [new WsClient(`${ws.wsUrl}/ws/chat/room`), new WsClient(`${ws.wsUrl}/ws/chat/room`)];
    clients.push(target, bystander);
    const [targetId] = await Promise.all([target.connected(), bystander.connected()]);

    const response = await call('notify', { conn_id: targetId, text: 'your build finished' });
    expect(response.status).toBe(200);
    expect(await target.next()).toEqual({ type: 'notify', text: 'your build finished' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(bystander.frames).toEqual([]);
  });
});
