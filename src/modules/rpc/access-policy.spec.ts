import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { AccessPolicyStore, decide, policyPath } from './access-policy.js';

describe('RPC access policy', () => {
  let dataDir: string;
  let store: AccessPolicyStore;
  let peer: string;
  let other: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-rpc-policy-'));
    store = new AccessPolicyStore(policyPath(dataDir), 0);
    peer = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    other = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('refuses everything to everyone by default', async () => {
    expect(decide(await store.current(), peer, 'core.version')).toEqual({ allowed: false });
  });

  it('matches module.function, module.* and *, per peer id, with the peer level', async () => {
    await store.allow(peer, 'hello.greet');
    expect(decide(await store.current(), peer, 'hello.greet')).toEqual({ allowed: true, level: 1 });
    // --level sets the level of the peer's calls (all of them), not of one pattern.
    await store.allow(peer, 'docs.*', 2);
    const document = await store.current();
    expect(decide(document, peer, 'hello.greet')).toEqual({ allowed: true, level: 2 });
    expect(decide(document, peer, 'hello.add')).toEqual({ allowed: false });
    expect(decide(document, peer, 'docs.search')).toEqual({ allowed: true, level: 2 });
    expect(decide(document, peer, 'docsx.search')).toEqual({ allowed: false });
    expect(decide(document, other, 'hello.greet')).toEqual({ allowed: false });
    await store.allow(other, '*', -1);
    expect(decide(await store.current(), other, 'anything.atAll')).toEqual({ allowed: true, level: -1 });
  });

  it('opens a function to every peer with *, at the anonymous level', async () => {
    await store.allow('*', 'core.version');
    expect(decide(await store.current(), other, 'core.version')).toEqual({ allowed: true, level: 0 });
  });

  it('withdraws one pattern or a whole peer, and persists with mode 0600', async () => {
    await store.allow(peer, 'a.b');
    await store.allow(peer, 'c.*');
    expect((await store.deny(peer, 'a.b')).changed).toBe(true);
    expect((await store.deny(peer, 'a.b')).changed).toBe(false);
    expect(JSON.parse(await readFile(policyPath(dataDir), 'utf8'))).toEqual({
      peers: { [peer]: { allow: ['c.*'], level: 1 } },
    });
    expect((await stat(policyPath(dataDir))).mode & 0o777).toBe(0o600);
    await store.deny(peer);
    expect((await store.read()).peers).toEqual({});
  });

  it('refuses bad peer ids, patterns and levels with a clear message', async () => {
    await expect(store.allow('bob', 'a.b')).rejects.toThrow('not a peer id');
    await expect(store.allow(peer, 'a')).rejects.toThrow('module.function');
    await expect(store.allow(peer, 'a.b', 5)).rejects.toThrow('level');
  });

  it('keeps the last good policy when the file turns invalid', async () => {
    await store.allow(peer, 'a.b');
    expect(decide(await store.current(), peer, 'a.b').allowed).toBe(true);
    await writeFile(policyPath(dataDir), '{broken');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(decide(await store.current(), peer, 'a.b').allowed).toBe(true);
    await expect(store.read()).rejects.toThrow('not valid JSON');
  });
});
