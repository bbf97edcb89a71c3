import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import { eventually } from '../../../test/support/eventually.js';
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

  it('holds an address to its open connections and gives a slot back when a connection closes', async () => {
    const server = await createRpcNode({
      privateKey: await generateKeyPair('Ed25519'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      inbound: { maxConnectionsPerAddress: 2, connectionsPerSecond: 100, allowedPeerConnectionsPerSecond: 100 },
    });
    const address = multiaddr(server.getMultiaddrs()[0].toString());
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => createRpcNode({ privateKey: await generateKeyPair('Ed25519') })),
    );
    try {
      await clients[0].dial(address);
      await clients[1].dial(address);
      await expect(clients[2].dial(address)).rejects.toThrow();
      await clients[0].hangUp(server.peerId);
      // The server sees the close a moment after the client.
      const deadline = Date.now() + 5000;
      let connected = false;
      while (!connected && Date.now() < deadline) {
        connected = await clients[3].dial(address).then(
          () => true,
          () => false,
        );
        if (!connected) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(connected).toBe(true);
      // Connections that came and went leave no slot taken.
      await Promise.all([clients[1].hangUp(server.peerId), clients[3].hangUp(server.peerId)]);
      await eventually(
        async () => server.getConnections().length,
        (count) => count === 0,
        5000,
      );
      await clients[0].dial(address);
      await clients[2].dial(address);
    } finally {
      await Promise.all(clients.map((client) => client.stop()));
      await server.stop();
    }
  });
});
