import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Libp2p } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { Export, Mod } from '../app-core/export.decorator.js';
import { FunctionRegistry } from '../app-core/function-registry.js';
import { FunctionRunner } from '../app-core/function-runner.js';
import { AccessPolicyStore, policyPath } from './access-policy.js';
import { FrameDecoder, encodeFrame } from './framing.js';
import { loadOrCreatePeerKey } from './identity.js';
import { RPC_PROTOCOL, parseResponse, type RpcResponse } from './messages.js';
import { createRpcNode } from './rpc-node.js';
import { RpcProvider } from './rpc-provider.js';

@Mod('gate')
class GateMod {
  running = 0;
  peak = 0;
  started = 0;
  private releases: Array<() => void> = [];

  @Export()
  async hold(index: number) {
    this.started++;
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    await new Promise<void>((release) => this.releases.push(release));
    this.running--;
    return index;
  }

  releaseAll() {
    this.releases.splice(0).forEach((release) => release());
  }
}

/** The provider against the real application core (FunctionRunner), driven by a raw peer. */
describe('RpcProvider', () => {
  let workspace: string;
  let server: Libp2p;
  let client: Libp2p;
  let gate: GateMod;
  let provider: RpcProvider;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-rpc-provider-'));
    const registry = new FunctionRegistry({ appId: 'spec', logger: { log: () => undefined, error: () => undefined } });
    gate = new GateMod();
    registry.registerInstance(gate);
    server = await createRpcNode({
      privateKey: await loadOrCreatePeerKey(join(workspace, 'server.key')),
      listen: ['/ip4/127.0.0.1/tcp/0'],
    });
    client = await createRpcNode({ privateKey: await loadOrCreatePeerKey(join(workspace, 'client.key')) });
    const policy = new AccessPolicyStore(policyPath(workspace));
    await policy.allow(client.peerId.toString(), 'gate.*');
    provider = new RpcProvider({
      runner: new FunctionRunner(registry, { dataDir: workspace }),
      policy,
      maxMessageBytes: 1 << 20,
      maxConcurrentCalls: 3,
      maxInFlightPerStream: 8,
      callTimeoutMs: 30_000,
      debug: false,
    });
    await provider.attach(server);
  });

  afterAll(async () => {
    await client.stop();
    await server.stop();
    await rm(workspace, { recursive: true, force: true });
  });

  it('runs at most maxConcurrentCalls at once and stops reading a stream past its in-flight limit', async () => {
    const stream = await client.dialProtocol(multiaddr(server.getMultiaddrs()[0]), RPC_PROTOCOL);
    const answers: RpcResponse[] = [];
    const decoder = new FrameDecoder(1 << 20);
    const reading = (async () => {
      for await (const chunk of stream)
        for (const event of decoder.push(chunk instanceof Uint8Array ? chunk : chunk.subarray()))
          if (event.kind === 'frame') answers.push(parseResponse(event.body)!);
    })();
    for (let index = 0; index < 20; index++) {
      const request = { type: 'request', call_id: `c${index}`, module: 'gate', function: 'hold', args: [index] };
      stream.send(encodeFrame(new TextEncoder().encode(JSON.stringify(request))));
    }
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
    for (let tries = 0; tries < 50 && provider.stats().waiting < 5; tries++) await settle();
    await settle();
    // 3 running, 5 waiting for a slot, the other 12 not read yet (and not read while nothing is answered).
    expect(gate.started).toBe(3);
    expect(provider.stats()).toMatchObject({ running: 3, waiting: 5, calls: 8 });
    while (answers.length < 20) {
      gate.releaseAll();
      await settle();
    }
    expect(gate.peak).toBe(3);
    expect(answers.map((answer) => answer.result).sort((a, b) => (a as number) - (b as number))).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    expect(provider.stats()).toMatchObject({ running: 0, waiting: 0, calls: 20 });
    await stream.close();
    await reading;
  });
});
