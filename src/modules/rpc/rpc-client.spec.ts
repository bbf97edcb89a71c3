import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { Libp2p, Stream } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { FrameDecoder, encodeFrame } from './framing.js';
import { loadOrCreatePeerKey } from './identity.js';
import { RPC_PROTOCOL, parseRequest, type RpcRequest } from './messages.js';
import { NO_ANSWER, isRefusal } from './rpc-client.js';
import { createRpcNode } from './rpc-node.js';
import { RpcPeerNode } from './rpc-peer.js';

/**
 * The consumer's correlator against a scripted provider (a real libp2p peer speaking the protocol), so
 * each answer order and each broken answer can be produced on purpose.
 */
describe('RpcClient correlator', () => {
  let workspace: string;
  let provider: Libp2p;
  let consumer: RpcPeerNode;
  let address: string;
  /** What the scripted provider does with each batch of requests it has read. */
  let script: (requests: RpcRequest[], reply: (message: unknown) => void, stream: Stream) => void;
  let batchSize = 1;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-rpc-client-'));
    provider = await createRpcNode({
      privateKey: await loadOrCreatePeerKey(join(workspace, 'provider.key')),
      listen: ['/ip4/127.0.0.1/tcp/0'],
    });
    await provider.handle(RPC_PROTOCOL, async (stream: Stream) => {
      const decoder = new FrameDecoder(1 << 24);
      const reply = (message: unknown) =>
        stream.send(
          encodeFrame(new TextEncoder().encode(typeof message === 'string' ? message : JSON.stringify(message))),
        );
      let batch: RpcRequest[] = [];
      for await (const chunk of stream) {
        for (const event of decoder.push(chunk instanceof Uint8Array ? chunk : chunk.subarray())) {
          if (event.kind !== 'frame') continue;
          const parsed = parseRequest(event.body);
          if (!parsed.ok) continue;
          batch.push(parsed.request);
          if (batch.length === batchSize) {
            script(batch, reply, stream);
            batch = [];
          }
        }
      }
    });
    address = provider.getMultiaddrs()[0].toString();
    consumer = await RpcPeerNode.start({ dataDir: join(workspace, 'consumer'), maxMessageBytes: 4096 });
  });

  afterAll(async () => {
    await consumer.stop();
    await provider.stop();
    await rm(workspace, { recursive: true, force: true });
  });

  it('matches answers given in reverse order to their calls', async () => {
    batchSize = 10;
    script = (requests, reply) => {
      for (const request of [...requests].reverse())
        reply({ type: 'response', call_id: request.call_id, result: request.args?.[0], error: null });
    };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) => consumer.call(address, 'm.f', { args: [index] })),
    );
    expect(results.map((result) => result.get())).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('drops and counts answers for unknown call_ids and malformed answers, then takes the real one', async () => {
    batchSize = 1;
    const before = consumer.stats().client;
    script = ([request], reply) => {
      reply({ type: 'response', call_id: 'nobody-asked', result: 1, error: null });
      reply('{"type":"response"');
      reply({ type: 'response', call_id: request.call_id, result: 'mine', error: null });
    };
    expect((await consumer.call(address, 'm.f')).get()).toBe('mine');
    const after = consumer.stats().client;
    expect(after.unknownResponses).toBe(before.unknownResponses + 1);
    expect(after.malformedResponses).toBe(before.malformedResponses + 1);
  });

  it('fails a call whose answer exceeds the maximum message size with 413, correlated by call_id', async () => {
    batchSize = 1;
    script = ([request], reply) =>
      reply({ type: 'response', call_id: request.call_id, result: 'r'.repeat(10_000), error: null });
    const result = await consumer.call(address, 'm.f');
    expect(result.info.exec_code).toBe(413);
    expect(result.result.data_info).toBe(NO_ANSWER);
  });

  it('refuses a request over the maximum message size before sending it', async () => {
    const result = await consumer.call(address, 'm.f', { args: ['a'.repeat(5000)] });
    expect(result.info.exec_code).toBe(413);
  });

  it('fails all pending calls at once when the provider resets the stream, and opens a new one next time', async () => {
    batchSize = 3;
    script = (_requests, _reply, stream) => stream.abort(new Error('provider gone'));
    const results = await Promise.all([1, 2, 3].map(() => consumer.call(address, 'm.f', { timeout: 20 })));
    for (const result of results) expect(result.info.exec_code).toBe(503);
    batchSize = 1;
    script = ([request], reply) => reply({ type: 'response', call_id: request.call_id, result: 'again', error: null });
    expect((await consumer.call(address, 'm.f')).get()).toBe('again');
  });

  it('validates its own input and an unreachable peer without throwing', async () => {
    expect((await consumer.call(address, 'nodot')).info.exec_code).toBe(400);
    expect((await consumer.call(address, 'm.f', { args: 'x' as never })).info.exec_code).toBe(400);
    expect((await consumer.call('/ip4/127.0.0.1/tcp/1', 'm.f')).info.exec_code).toBe(400);
    const nobody = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    const unreachable = await consumer.call(`/ip4/127.0.0.1/tcp/1/p2p/${nobody}`, 'm.f', { timeout: 5 });
    expect(unreachable.info.exec_code).toBe(503);
  });
});

describe('isRefusal', () => {
  const named = (name: string, message: string, extra: object = {}) =>
    Object.assign(new Error(message), { name, ...extra });

  it('takes a handshake cut short or a reset for the provider turning the connection away', () => {
    expect(isRefusal(named('EncryptionFailedError', 'Encryption failed'))).toBe(true);
    expect(isRefusal(named('Error', 'connection error 127.0.0.1:9100: connect ECONNRESET 127.0.0.1:9100'))).toBe(true);
    expect(isRefusal(new AggregateError([named('Error', 'write EPIPE', { code: 'EPIPE' })], 'All dials failed'))).toBe(
      true,
    );
    expect(isRefusal(new Error('dial failed', { cause: named('Error', 'reset', { code: 'ECONNRESET' }) }))).toBe(true);
  });

  it('does not retry an address nobody listens on, the wrong peer or a protocol the provider lacks', () => {
    expect(isRefusal(named('Error', 'connect ECONNREFUSED 127.0.0.1:1', { code: 'ECONNREFUSED' }))).toBe(false);
    expect(
      isRefusal(named('EncryptionFailedError', 'Payload identity key X does not match expected remote identity key Y')),
    ).toBe(false);
    expect(isRefusal(named('UnsupportedProtocolError', 'protocol selection failed'))).toBe(false);
    expect(isRefusal('ECONNRESET')).toBe(false);
  });
});
