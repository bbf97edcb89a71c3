import type { ChildProcess } from 'node:child_process';
import { backends } from '../../support/backends.js';
import {
  WsClient,
  relayBetween,
  spawnWsWorker,
  wsWorkerEnvironment,
  type SpawnedWorker,
} from '../../support/ws-worker-under-test.js';

/**
 * Two WS workers as separate OS processes reach each other's connections through the broker: Redis
 * pub/sub on MySQL + Redis, and without Redis the parent's relay (this test process stands in for the
 * worker manager: it forwards each `{tb: 'bus'}` message to the other child).
 */
describe.each(backends())('WebSocket workers in two processes (%s)', (backend) => {
  const workers: SpawnedWorker[] = [];
  const clients: WsClient[] = [];
  let dispose: () => Promise<void>;

  const connect = (worker: SpawnedWorker, path = '/ws/chat/room') => {
    const client = new WsClient(`${worker.wsUrl}${path}`);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const viaRedis = backend.name === 'mysql+redis';
    const environment = await wsWorkerEnvironment(backend, { MESSAGE_BROKER: viaRedis ? 'redis' : 'ipc' });
    dispose = environment.dispose;
    const children = (): ChildProcess[] => workers.map((worker) => worker.child);
    const relay = relayBetween(children);
    // One after the other: both migrate the same database at start (the manager migrates once, before).
    workers.push(await spawnWsWorker(environment.env, relay));
    workers.push(await spawnWsWorker(environment.env, relay));
  });

  afterEach(() => {
    clients.splice(0).forEach((client) => client.close());
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await dispose?.();
  });

  it('broadcasts a channel message to members on both workers', async () => {
    const [onA, onB] = [connect(workers[0]), connect(workers[1])];
    const [idA] = await Promise.all([onA.connected(), onB.connected()]);
    onA.send({ action: 'say', channel: 'lobby', text: 'across' });
    expect(await onB.next()).toEqual({ from: idA, text: 'across' });
    expect(await onA.next()).toEqual({ from: idA, text: 'across' });
  });

  it('joins a channel on one worker and receives broadcasts sent from the other', async () => {
    const [onA, onB] = [connect(workers[0]), connect(workers[1])];
    await Promise.all([onA.connected(), onB.connected()]);
    onB.send({ action: 'join', channel: 'ops' });
    await onB.next((frame) => (frame as { joined?: string }).joined === 'ops');
    onA.send({ action: 'say_others', channel: 'ops', text: 'deploying' });
    expect(await onB.next()).toMatchObject({ text: 'deploying' });
  });

  it('sends to and closes a connection held by the other worker', async () => {
    const [onA, onB] = [connect(workers[0]), connect(workers[1])];
    const [idA, idB] = await Promise.all([onA.connected(), onB.connected()]);
    onA.send({ action: 'send_to', conn_id: idB, text: 'hi B' });
    expect(await onB.next()).toEqual({ direct: 'hi B', from: idA });
    onA.send({ action: 'kick', conn_id: idB });
    expect(await onB.closedWith()).toEqual({ code: 4000, reason: 'kicked' });
  });

  it('broadcastAll reaches every connection of both workers', async () => {
    const [onA, onB] = [connect(workers[0]), connect(workers[1])];
    await Promise.all([onA.connected(), onB.connected()]);
    onB.send({ action: 'all', text: 'everyone' });
    expect(await onA.next()).toEqual({ all: 'everyone' });
    expect(await onB.next()).toEqual({ all: 'everyone' });
  });
});
