import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreatePeerKey, peerIdOf } from './identity.js';
import { createRpcNode } from './rpc-node.js';

const relayed = (addresses: Array<{ toString(): string }>) =>
  addresses.map(String).filter((address) => address.includes('/p2p-circuit'));

describe('createRpcNode', () => {
  let workspace: string;
  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-rpc-node-'));
  });
  afterAll(() => rm(workspace, { recursive: true, force: true }));

  it('refuses an address that is not a multiaddr with a clear message', async () => {
    const privateKey = await loadOrCreatePeerKey(join(workspace, 'bad.key'));
    await expect(createRpcNode({ privateKey, listen: ['tcp://0.0.0.0:9100'] })).rejects.toThrow(
      'listen address "tcp://0.0.0.0:9100" is not a multiaddr',
    );
    await expect(createRpcNode({ privateKey, relayServer: true, relayReservationPeers: ['bob'] })).rejects.toThrow(
      'not a peer id',
    );
  });

  it('lets a relay accept reservations only from the allowed provider ids', async () => {
    const allowedKey = await loadOrCreatePeerKey(join(workspace, 'allowed.key'));
    const relay = await createRpcNode({
      privateKey: await loadOrCreatePeerKey(join(workspace, 'relay.key')),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      relayServer: true,
      relayReservationPeers: [peerIdOf(allowedKey)],
    });
    const relayAddress = relay.getMultiaddrs()[0].toString();
    const allowed = await createRpcNode({ privateKey: allowedKey, relays: [relayAddress] });
    const refused = await createRpcNode({
      privateKey: await loadOrCreatePeerKey(join(workspace, 'refused.key')),
      relays: [relayAddress],
    });
    try {
      const deadline = Date.now() + 10_000;
      while (relayed(allowed.getMultiaddrs()).length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(relayed(allowed.getMultiaddrs())[0]).toBe(`${relayAddress}/p2p-circuit/p2p/${allowed.peerId.toString()}`);
      // The refused peer's reservation attempt has had the same time and more.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(relayed(refused.getMultiaddrs())).toEqual([]);
    } finally {
      await Promise.all([allowed.stop(), refused.stop()]);
      await relay.stop();
    }
  });
});
