import { backends } from '../../support/backends.js';
import {
  WsClient,
  startWsWorker,
  wsWorkerEnvironment,
  type WsWorkerUnderTest,
} from '../../support/ws-worker-under-test.js';

/** The heartbeat: every WS_PING_INTERVAL_SECONDS a ping; a peer that missed the previous one is dropped. */
describe.each(backends())('WebSocket worker heartbeat (%s)', (backend) => {
  let worker: WsWorkerUnderTest;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const environment = await wsWorkerEnvironment(backend, { WS_PING_INTERVAL_SECONDS: '0.1' });
    dispose = environment.dispose;
    worker = await startWsWorker(environment.env);
  });

  afterAll(async () => {
    await worker?.close();
    await dispose?.();
  });

  it('drops a peer that stops answering pings and keeps one that answers', async () => {
    const dead = new WsClient(`${worker.wsUrl}/ws/chat/room`);
    const alive = new WsClient(`${worker.wsUrl}/ws/chat/room`);
    await Promise.all([dead.connected(), alive.connected()]);
    let pings = 0;
    alive.socket.on('ping', () => (pings += 1));
    // A frozen peer: its ping frames go unanswered (the client library answers them by itself otherwise).
    (dead.socket as unknown as { pong: () => void }).pong = () => undefined;

    // Terminated without a close frame: the client sees 1006 (abnormal closure).
    expect((await dead.closedWith(3000)).code).toBe(1006);
    expect(alive.closed).toBeNull();
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(worker.server.stats.connections).toBe(1);
    alive.close();
  });
});

describe.each(backends())('WebSocket worker shutdown (%s)', (backend) => {
  it('closes every connection with 1001 when the worker shuts down', async () => {
    const environment = await wsWorkerEnvironment(backend);
    const worker = await startWsWorker(environment.env);
    try {
      const clients = [new WsClient(`${worker.wsUrl}/ws/chat/room`), new WsClient(`${worker.wsUrl}/ws/chat/room`)];
      await Promise.all(clients.map((client) => client.connected()));
      await worker.close();
      for (const client of clients)
        expect(await client.closedWith()).toEqual({ code: 1001, reason: 'Server shutting down' });
    } finally {
      await environment.dispose();
    }
  });

  it('shuts down even when a client never answers the close frame', async () => {
    const environment = await wsWorkerEnvironment(backend);
    const worker = await startWsWorker(environment.env);
    try {
      const frozen = new WsClient(`${worker.wsUrl}/ws/chat/room`);
      await frozen.connected();
      frozen.socket.pause(); // reads nothing more, so it never sees nor answers the close frame
      await worker.close(); // the test's timeout fails it if the shutdown waits for the frozen client
      frozen.socket.resume();
      // Its buffered bytes still hold the close frame the worker sent before cutting it off.
      expect((await frozen.closedWith()).code).toBe(1001);
    } finally {
      await environment.dispose();
    }
  }, 15_000);
});
