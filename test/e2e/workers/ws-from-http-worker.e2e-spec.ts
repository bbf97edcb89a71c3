import type { ChildProcess } from 'node:child_process';
import { backends } from '../../support/backends.js';
import {
  WsClient,
  relayBetween,
  spawnWorker,
  tokenWithLevel,
  wsWorkerEnvironment,
  type SpawnedWorker,
} from '../../support/ws-worker-under-test.js';

/**
 * A function an HTTP worker runs reaches the connections of a WS worker in another process through the
 * broker (`app.ws`): Redis on MySQL + Redis, the parent's IPC relay without Redis (this test process plays
 * the worker manager's part).
 */
describe.each(backends())('WebSocket channels from an HTTP worker function (%s)', (backend) => {
  const workers: SpawnedWorker[] = [];
  const clients: WsClient[] = [];
  let http: SpawnedWorker;
  let ws: SpawnedWorker;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const viaRedis = backend.name === 'mysql+redis';
    const environment = await wsWorkerEnvironment(backend, {
      MESSAGE_BROKER: viaRedis ? 'redis' : 'ipc',
      HTTP_WORKER_HOST: '127.0.0.1',
      HTTP_WORKER_PORT: '0',
    });
    dispose = environment.dispose;
    const relay = relayBetween((): ChildProcess[] => workers.map((worker) => worker.child));
    // One after the other: both migrate the same database at start (the manager migrates once, before).
    ws = await spawnWorker('ws', environment.env, relay);
    workers.push(ws);
    http = await spawnWorker('http', environment.env, relay);
    workers.push(http);
  });

  afterEach(() => {
    clients.splice(0).forEach((client) => client.close());
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await dispose?.();
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
