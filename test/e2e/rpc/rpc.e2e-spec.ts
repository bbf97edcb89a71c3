import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Libp2p, Stream } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import {
  FrameDecoder,
  NO_ANSWER,
  RPC_PROTOCOL,
  RpcPeerNode,
  createRpcNode,
  encodeFrame,
  loadOrCreatePeerKey,
  parseResponse,
  type RpcResponse,
} from '../../../src/modules/rpc/index.js';
import { compileSourcesFor, runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { eventually } from '../../support/eventually.js';

/**
 * Real peers in separate processes on loopback: providers and a relay are `tb rpc serve|relay` child
 * processes running the compiled sources; consumers are in-process RpcPeerNodes (the in-process API).
 */
describe('peer-to-peer RPC (tb rpc, separate processes)', () => {
  let workspace: string;
  let tbMain: string;
  const processes: TbProcess[] = [];
  const consumers: RpcPeerNode[] = [];

  async function providerDir(name: string): Promise<string> {
    const dataDir = join(workspace, name);
    await mkdir(join(dataDir, 'mods'), { recursive: true });
    await cp(resolve('test/fixtures/rpc-test-mod'), join(dataDir, 'mods', 'rpctest'), { recursive: true });
    return dataDir;
  }

  function tbEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
    return { DATA_DIR: dataDir, LOG_LEVEL: 'error', ...extra };
  }

  async function serve(
    dataDir: string,
    extra: Record<string, string> = {},
    argv: string[] = [],
  ): Promise<{ tb: TbProcess; peerId: string; address: string; addresses: string[] }> {
    const tb = startTb(
      tbMain,
      ['rpc', 'serve', '--listen', '/ip4/127.0.0.1/tcp/0', '--json', ...argv],
      tbEnv(dataDir, extra),
    );
    processes.push(tb);
    const line = await tb.line((each) => each.startsWith('{'));
    const ready = JSON.parse(line) as { peer_id: string; addresses: string[] };
    const address = ready.addresses.find((each) => !each.includes('/ws') && !each.includes('p2p-circuit'))!;
    return { tb, peerId: ready.peer_id, address, addresses: ready.addresses };
  }

  async function tb(dataDir: string, ...argv: string[]) {
    return runTb(tbMain, ['rpc', ...argv], tbEnv(dataDir));
  }

  async function consumer(name: string, settings: Parameters<typeof RpcPeerNode.start>[0] = { dataDir: '' }) {
    const peer = await RpcPeerNode.start({ ...settings, dataDir: join(workspace, name) });
    consumers.push(peer);
    return peer;
  }

  let provider: { tb: TbProcess; peerId: string; address: string; addresses: string[] };
  let providerData: string;
  let alice: RpcPeerNode;
  let bob: RpcPeerNode;
  let carol: RpcPeerNode;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-rpc-e2e-'));
    tbMain = await compileSourcesFor(join(workspace, 'build'));
    providerData = await providerDir('provider');
    alice = await consumer('alice');
    bob = await consumer('bob');
    carol = await consumer('carol');
    expect((await tb(providerData, 'allow', alice.peerId, 'rpctest.*')).code).toBe(0);
    expect((await tb(providerData, 'allow', carol.peerId, 'rpctest.echo')).code).toBe(0);
    provider = await serve(providerData, {}, ['--listen', '/ip4/127.0.0.1/tcp/0/ws']);
  });

  afterAll(async () => {
    for (const peer of consumers) await peer.stop().catch(() => undefined);
    await Promise.all(processes.map((each) => each.stop('SIGKILL')));
    await rm(workspace, { recursive: true, force: true });
  });

  it('keeps the identity in DATA_DIR/rpc/peer.key with mode 0600 and prints it with tb rpc id', async () => {
    const info = await stat(join(providerData, 'rpc', 'peer.key'));
    expect(info.mode & 0o777).toBe(0o600);
    const id = await tb(providerData, 'id', '--json');
    expect(id.code).toBe(0);
    expect(JSON.parse(id.stdout).peer_id).toBe(provider.peerId);
  });

  it('calls a function directly and gets its result, with the same call answered as a Result', async () => {
    const result = await alice.call(provider.address, 'rpctest.echo', { args: [{ hello: 'world', n: [1, 2] }] });
    expect(result.isError()).toBe(false);
    expect(result.get()).toEqual({ hello: 'world', n: [1, 2] });
    const kwargs = await alice.call(provider.address, 'rpctest.sleep', { kwargs: { ms: 1, value: 'kw' } });
    expect(kwargs.get()).toBe('kw');
  });

  it('calls over the WebSocket transport', async () => {
    const websocket = provider.addresses.find((each) => each.includes('/ws/'))!;
    expect(websocket).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/ws\/p2p\//);
    const result = await carol.call(websocket, 'rpctest.echo', { args: ['over ws'] });
    expect(result.info).toEqual({ exec_code: 0, help_text: 'OK' });
    expect(result.get()).toBe('over ws');
    const connection = carol.node.getConnections().find((each) => each.remotePeer.toString() === provider.peerId)!;
    expect(connection.remoteAddr.toString()).toContain('/ws');
  });

  it('tb rpc call prints the Result and exits by outcome', async () => {
    const aliceDir = join(workspace, 'alice');
    const ok = await runTb(
      tbMain,
      ['rpc', 'call', provider.address, 'rpctest.echo', '--args', '["cli"]', '--json'],
      tbEnv(aliceDir),
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).result.data).toBe('cli');
    const missing = await runTb(
      tbMain,
      ['rpc', 'call', provider.address, 'rpctest.nothing', '--json'],
      tbEnv(aliceDir),
    );
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).info.exec_code).toBe(404);
    const usage = await runTb(
      tbMain,
      ['rpc', 'call', provider.address, 'rpctest.echo', '--args', '{}'],
      tbEnv(aliceDir),
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--args must be a JSON array');
  });

  it('runs 100 concurrent calls on one connection, answered out of order, each with its own result', async () => {
    const finished: number[] = [];
    const calls = Array.from({ length: 100 }, (_, index) =>
      alice.call(provider.address, 'rpctest.sleep', { args: [(100 - index) * 4, index] }).then((result) => {
        finished.push(index);
        return result;
      }),
    );
    const results = await Promise.all(calls);
    expect(results.map((result) => result.get())).toEqual(Array.from({ length: 100 }, (_, index) => index));
    expect(finished).not.toEqual([...finished].sort((a, b) => a - b));
    expect(finished[0]).toBeGreaterThan(50);
    expect(alice.node.getConnections().filter((c) => c.remotePeer.toString() === provider.peerId)).toHaveLength(1);
  });

  it('times a call out on the consumer, then drops and counts its late answer', async () => {
    const before = alice.stats().client.lateResponses;
    const result = await alice.call(provider.address, 'rpctest.sleep', { args: [600, 'late'], timeout: 0.15 });
    expect(result.info.exec_code).toBe(408);
    expect(result.result.data_info).toBe(NO_ANSWER);
    const after = await eventually(
      async () => alice.stats().client.lateResponses,
      (count) => count > before,
      5000,
    );
    expect(after).toBe(before + 1);
    expect(alice.stats().client.pending).toBe(0);
  });

  it('aborts a call with its AbortSignal', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await alice.call(provider.address, 'rpctest.sleep', { args: [3000], signal: controller.signal });
    expect(result.info.exec_code).toBe(499);
    const already = await alice.call(provider.address, 'rpctest.echo', { args: [1], signal: AbortSignal.abort() });
    expect(already.info.exec_code).toBe(499);
  });

  it('answers every error code: 403, 404, 500 without details, an error Result mapped, 413 on both sides', async () => {
    const forbidden = await bob.call(provider.address, 'rpctest.echo', { args: [1] });
    expect(forbidden.info.exec_code).toBe(403);
    expect(forbidden.info.help_text).toContain(bob.peerId);
    const level = await alice.call(provider.address, 'rpctest.admin');
    expect(level.info.exec_code).toBe(403);
    expect(level.info.help_text).toContain('level');
    const notFound = await alice.call(provider.address, 'rpctest.nothing');
    expect(notFound.info.exec_code).toBe(404);
    const thrown = await alice.call(provider.address, 'rpctest.boom');
    expect(thrown.info.exec_code).toBe(500);
    expect(thrown.error).toBe('InternalError');
    expect(JSON.stringify(thrown)).not.toContain('kaboom');
    const unserializable = await alice.call(provider.address, 'rpctest.bigint');
    expect(unserializable.info.exec_code).toBe(500);
    expect(unserializable.info.help_text).toContain('JSON');
    const badArguments = await alice.call(provider.address, 'rpctest.echo', { kwargs: { nope: 1 } });
    expect(badArguments.info.exec_code).toBe(-3);
    expect(badArguments.info.help_text).toContain('nope');
    expect(badArguments.result.data_info).not.toBe(NO_ANSWER);
    const tooLarge = await alice.call(provider.address, 'rpctest.echo', { args: ['y'.repeat(4 * 1024 * 1024 + 1)] });
    expect(tooLarge.info.exec_code).toBe(413);
    expect(tooLarge.result.data_info).toBe(NO_ANSWER);
    const hugeAnswer = await alice.call(provider.address, 'rpctest.big', { args: [4 * 1024 * 1024 + 10] });
    expect(hugeAnswer.info.exec_code).toBe(413);
    expect(hugeAnswer.result.data_info).not.toBe(NO_ANSWER);
    // The session survives every error.
    expect((await alice.call(provider.address, 'rpctest.echo', { args: ['still here'] })).get()).toBe('still here');
  });

  it('applies the access policy per peer id, `*` grants and tb rpc deny while the provider runs', async () => {
    expect((await tb(providerData, 'allow', '*', 'rpctest.echo')).code).toBe(0);
    const opened = await eventually(
      () => bob.call(provider.address, 'rpctest.echo', { args: ['bob'] }),
      (result) => !result.isError(),
      4000,
    );
    expect(opened.get()).toBe('bob');
    expect((await bob.call(provider.address, 'rpctest.sleep', { args: [1, 'x'] })).info.exec_code).toBe(403);
    const peers = await tb(providerData, 'peers', '--json');
    expect(JSON.parse(peers.stdout).peers).toEqual({
      [alice.peerId]: { allow: ['rpctest.*'], level: 1 },
      [carol.peerId]: { allow: ['rpctest.echo'], level: 1 },
      '*': { allow: ['rpctest.echo'], level: 0 },
    });
    expect((await tb(providerData, 'allow', bob.peerId, 'rpctest.admin', '--level=-1')).code).toBe(0);
    const admin = await eventually(
      () => bob.call(provider.address, 'rpctest.admin'),
      (result) => !result.isError(),
      4000,
    );
    expect(admin.get()).toBe('admin only');
    expect((await tb(providerData, 'deny', '*')).code).toBe(0);
    expect((await tb(providerData, 'deny', bob.peerId)).code).toBe(0);
    const closed = await eventually(
      () => bob.call(provider.address, 'rpctest.echo', { args: ['bob'] }),
      (result) => result.isError(),
      4000,
    );
    expect(closed.info.exec_code).toBe(403);
    const invalid = await tb(providerData, 'allow', 'not-a-peer', 'rpctest.echo');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('not a peer id');
  });

  describe('hostile clients', () => {
    it('keeps answering an allowed peer promptly while one address holds stalled connections', async () => {
      const dave = await consumer('dave');
      expect((await tb(providerData, 'allow', dave.peerId, 'rpctest.echo')).code).toBe(0);
      const port = Number(/\/tcp\/(\d+)\//.exec(provider.address)![1]);
      // 12 connections from 127.0.0.2, 5 bytes each, one every 250 ms (under any per-address rate limit).
      const stalled = await stallConnections(port, 12, 250);
      const started = Date.now();
      const result = await dave.call(provider.address, 'rpctest.echo', { args: ['through'], timeout: 5 });
      const elapsedMs = Date.now() - started;
      expect(result.info).toEqual({ exec_code: 0, help_text: 'OK' });
      expect(result.get()).toBe('through');
      expect(elapsedMs).toBeLessThan(2000);
      // The provider closes every stalled connection: refused past the per-address limit, the others at
      // the upgrade timeout (5 s by default).
      const lifetimes = await Promise.all(stalled.map((each) => each.closed));
      expect(lifetimes.filter((lifetime) => lifetime < 1000).length).toBeGreaterThanOrEqual(12 - 8);
      expect(Math.max(...lifetimes)).toBeLessThan(5000 + 1500);
    });

    it('answers 32 parallel calls from one consumer on one connection', async () => {
      const erin = await consumer('erin');
      expect((await tb(providerData, 'allow', erin.peerId, 'rpctest.*')).code).toBe(0);
      await eventually(
        () => erin.call(provider.address, 'rpctest.echo', { args: [0] }),
        (result) => !result.isError(),
        4000,
      );
      const results = await Promise.all(
        Array.from({ length: 32 }, (_, index) =>
          erin.call(provider.address, 'rpctest.sleep', { args: [20, index], timeout: 10 }),
        ),
      );
      expect(results.map((result) => result.info.exec_code)).toEqual(Array.from({ length: 32 }, () => 0));
      expect(results.map((result) => result.get())).toEqual(Array.from({ length: 32 }, (_, index) => index));
      expect(erin.node.getConnections().filter((c) => c.remotePeer.toString() === provider.peerId)).toHaveLength(1);
    });

    it('answers 32 processes of one consumer dialing at once, each on its own connection', async () => {
      const frank = await consumer('frank');
      expect((await tb(providerData, 'allow', frank.peerId, 'rpctest.*')).code).toBe(0);
      await eventually(
        () => frank.call(provider.address, 'rpctest.echo', { args: [0] }),
        (result) => !result.isError(),
        4000,
      );
      // Same identity, separate nodes: what 32 `tb rpc call` processes started together do.
      const nodes = await Promise.all(
        Array.from({ length: 32 }, () => RpcPeerNode.start({ dataDir: join(workspace, 'frank') })),
      );
      consumers.push(...nodes);
      const results = await Promise.all(
        nodes.map((node, index) => node.call(provider.address, 'rpctest.echo', { args: [index], timeout: 10 })),
      );
      expect(results.map((result) => `${result.info.exec_code} ${result.info.help_text}`)).toEqual(
        Array.from({ length: 32 }, () => '0 OK'),
      );
      expect(results.map((result) => result.get())).toEqual(Array.from({ length: 32 }, (_, index) => index));
      await Promise.all(nodes.map((node) => node.stop()));
    });

    it('answers 8 parallel tb rpc call processes of one consumer', async () => {
      const frankDir = join(workspace, 'frank');
      const runs = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          runTb(
            tbMain,
            ['rpc', 'call', provider.address, 'rpctest.echo', '--args', `[${index}]`, '--json', '--timeout', '20'],
            tbEnv(frankDir),
          ),
        ),
      );
      expect(runs.map((run) => `${run.code} ${run.stderr}`)).toEqual(Array.from({ length: 8 }, () => '0 '));
      expect(runs.map((run) => JSON.parse(run.stdout).result.data)).toEqual(
        Array.from({ length: 8 }, (_, index) => index),
      );
    });
  });

  describe('a raw client speaking malformed messages', () => {
    let raw: Libp2p;
    beforeAll(async () => {
      raw = await createRpcNode({ privateKey: await loadOrCreatePeerKey(join(workspace, 'raw', 'rpc', 'peer.key')) });
      await tb(providerData, 'allow', raw.peerId.toString(), 'rpctest.echo');
    });
    afterAll(async () => raw.stop());

    async function rawStream(): Promise<{ stream: Stream; next(): Promise<RpcResponse | 'closed'> }> {
      const stream = await raw.dialProtocol(multiaddr(provider.address), RPC_PROTOCOL);
      const decoder = new FrameDecoder(1024 * 1024);
      const queue: Array<RpcResponse | 'closed'> = [];
      const waiters: Array<() => void> = [];
      void (async () => {
        try {
          for await (const chunk of stream) {
            for (const event of decoder.push(chunk instanceof Uint8Array ? chunk : chunk.subarray()))
              if (event.kind === 'frame') queue.push(parseResponse(event.body)!);
            waiters.splice(0).forEach((wake) => wake());
          }
        } catch {
          // reset
        }
        queue.push('closed');
        waiters.splice(0).forEach((wake) => wake());
      })();
      return {
        stream,
        async next() {
          while (queue.length === 0) await new Promise<void>((wake) => waiters.push(wake));
          return queue.shift()!;
        },
      };
    }

    const text = (value: string) => new TextEncoder().encode(value);

    it('answers 400 to each malformed message and keeps serving the same stream', async () => {
      const { stream, next } = await rawStream();
      const cases: Array<[string, string | null, string]> = [
        ['{not json', null, 'JSON'],
        ['[1,2]', null, 'object'],
        ['{"type":"response","call_id":"c1","module":"rpctest","function":"echo"}', 'c1', 'type'],
        ['{"type":"request","module":"rpctest","function":"echo"}', null, 'call_id'],
        ['{"type":"request","call_id":"c2","function":"echo"}', 'c2', 'module'],
        ['{"type":"request","call_id":"c3","module":"rpctest","function":"echo","args":{"a":1}}', 'c3', 'args'],
        ['{"type":"request","call_id":"c4","module":"rpctest","function":"echo","kwargs":[1]}', 'c4', 'kwargs'],
      ];
      for (const [body, callId, field] of cases) {
        stream.send(encodeFrame(text(body)));
        const answer = await next();
        expect(answer).toMatchObject({ type: 'response', call_id: callId, result: null, error: { code: 400 } });
        expect((answer as RpcResponse).error!.message).toContain(field);
      }
      stream.send(
        encodeFrame(text('{"type":"request","call_id":"ok","module":"rpctest","function":"echo","args":[7]}')),
      );
      expect(await next()).toEqual({ type: 'response', call_id: 'ok', result: 7, error: null });
      // An unframeable length prefix: answered 400, that stream closed, the provider keeps running.
      stream.send(new Uint8Array(12).fill(0xff));
      expect(await next()).toMatchObject({ call_id: null, error: { code: 400 } });
      expect(await next()).toBe('closed');
      expect((await alice.call(provider.address, 'rpctest.echo', { args: ['up'] })).get()).toBe('up');
    });

    it('answers 413 with the call_id of an oversized request', async () => {
      const { stream, next } = await rawStream();
      const body = `{"type":"request","call_id":"huge","module":"rpctest","function":"echo","args":["${'z'.repeat(4 * 1024 * 1024)}"]}`;
      stream.send(encodeFrame(text(body)));
      expect(await next()).toMatchObject({ call_id: 'huge', result: null, error: { code: 413 } });
      stream.send(
        encodeFrame(text('{"type":"request","call_id":"after","module":"rpctest","function":"echo","args":[1]}')),
      );
      expect(await next()).toEqual({ type: 'response', call_id: 'after', result: 1, error: null });
    });
  });

  describe('a strict provider (DEBUG, 64 KiB messages, 0.5 s provider timeout)', () => {
    let strict: { tb: TbProcess; address: string };
    beforeAll(async () => {
      const dataDir = await providerDir('strict');
      await tb(dataDir, 'allow', alice.peerId, '*');
      strict = await serve(dataDir, {
        DEBUG: 'true',
        RPC_MAX_MESSAGE_BYTES: '65536',
        RPC_PROVIDER_TIMEOUT_SECONDS: '0.5',
      });
    });

    it('answers 408 when the function outlives the provider timeout', async () => {
      const result = await alice.call(strict.address, 'rpctest.sleep', { args: [3000], timeout: 10 });
      expect(result.info.exec_code).toBe(408);
      expect(result.result.data_info).not.toBe(NO_ANSWER);
    });

    it('puts the exception into details when the provider runs with DEBUG', async () => {
      const result = await alice.call(strict.address, 'rpctest.boom');
      expect(result.info.exec_code).toBe(500);
      expect(result.get()).toContain('kaboom');
    });

    it('answers 413 for a request over its own limit, correlated by call_id', async () => {
      const result = await alice.call(strict.address, 'rpctest.echo', { args: ['q'.repeat(100_000)] });
      expect(result.info.exec_code).toBe(413);
      expect(result.result.data_info).not.toBe(NO_ANSWER);
      expect((await alice.call(strict.address, 'rpctest.echo', { args: ['fine'] })).get()).toBe('fine');
    });
  });

  it('fails every pending call at once when the provider goes away, and reconnects to it after a restart with the same identity', async () => {
    const dataDir = await providerDir('restarting');
    await tb(dataDir, 'allow', alice.peerId, 'rpctest.*');
    const first = await serve(dataDir);
    const pending = Array.from({ length: 5 }, () => alice.call(first.address, 'rpctest.sleep', { args: [20_000] }));
    await eventually(
      async () => alice.stats().client.pending,
      (count) => count >= 5,
      5000,
    );
    await first.tb.stop('SIGKILL');
    const results = await Promise.all(pending);
    for (const result of results) {
      expect(result.info.exec_code).toBe(503);
      expect(result.info.help_text).toContain('RPC call failed');
    }
    const second = await serve(dataDir);
    expect(second.peerId).toBe(first.peerId);
    const again = await alice.call(second.address, 'rpctest.echo', { args: ['back'] });
    expect(again.get()).toBe('back');
    // SIGTERM stops a provider cleanly.
    expect(await second.tb.stop('SIGTERM')).toBe(0);
  });

  it('calls through a Circuit Relay v2 relay that only ever carries ciphertext', async () => {
    const relayDir = join(workspace, 'relay');
    const relay = startTb(tbMain, ['rpc', 'relay', '--listen', '/ip4/127.0.0.1/tcp/0', '--json'], tbEnv(relayDir));
    processes.push(relay);
    const relayInfo = JSON.parse(await relay.line((each) => each.startsWith('{'))) as {
      peer_id: string;
      addresses: string[];
    };
    const relayAddress = relayInfo.addresses[0];
    const relayPort = Number(/\/tcp\/(\d+)/.exec(relayAddress)![1]);
    // The provider reaches the relay through a recording proxy: what the relay forwards to it is recorded.
    const recorder = await recordingProxy(relayPort);
    const hiddenDir = await providerDir('hidden');
    await tb(hiddenDir, 'allow', alice.peerId, 'rpctest.echo');
    const hidden = await serve(hiddenDir, {}, [
      '--relay',
      `/ip4/127.0.0.1/tcp/${recorder.port}/p2p/${relayInfo.peer_id}`,
    ]);
    expect(hidden.addresses.some((each) => each.includes('/p2p-circuit'))).toBe(true);
    const viaRelay = `${relayAddress}/p2p-circuit/p2p/${hidden.peerId}`;
    const marker = `PLAINTEXT-${randomBytes(8).toString('hex')}-`;
    const payload = marker.repeat(2000);
    const bytesBefore = recorder.bytes();
    const result = await alice.call(viaRelay, 'rpctest.echo', { args: [payload] });
    expect(result.isError()).toBe(false);
    expect(result.get()).toBe(payload);
    const carried = recorder.recorded();
    // Request and answer both went through the relay (at least the payload twice) …
    expect(recorder.bytes() - bytesBefore).toBeGreaterThan(payload.length * 2);
    // … and none of it is readable there.
    expect(carried.includes(Buffer.from(marker))).toBe(false);
    expect(carried.includes(Buffer.from('rpctest'))).toBe(false);
    // DCUtR is wired on both peers; it upgrades only towards public addresses, so on loopback the
    // connection stays relayed (hole punching needs a real NAT; see docs/rpc.md).
    expect(alice.node.getProtocols()).toContain('/libp2p/dcutr');
    recorder.close();
  });
});

/** A TCP proxy to 127.0.0.1:targetPort that keeps every byte it forwards in both directions. */
async function recordingProxy(targetPort: number) {
  const chunks: Buffer[] = [];
  let total = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    const record = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
    };
    client.on('data', (chunk: Buffer) => {
      record(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      record(chunk);
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return {
    port: (server.address() as { port: number }).port,
    bytes: () => total,
    recorded: () => Buffer.concat(chunks),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * Opens `count` TCP connections to 127.0.0.1:port from 127.0.0.2, one every `intervalMs`, sends 5 bytes on
 * each and never more. `closed` resolves with how long the provider kept each open (ms).
 */
async function stallConnections(
  port: number,
  count: number,
  intervalMs: number,
): Promise<Array<{ socket: Socket; closed: Promise<number> }>> {
  const opened: Array<{ socket: Socket; closed: Promise<number> }> = [];
  for (let index = 0; index < count; index++) {
    if (index > 0) await new Promise((wait) => setTimeout(wait, intervalMs));
    const openedAt = Date.now();
    const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
    socket.on('error', () => undefined);
    // A connection the provider refuses at once may be reset before the client sees it established.
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - openedAt)));
    await Promise.race([new Promise((connected) => socket.once('connect', connected)), closed]);
    if (!socket.destroyed) socket.write(Buffer.from([0x13, 0x2f, 0x6d, 0x75, 0x6c]));
    opened.push({ socket, closed });
  }
  return opened;
}
