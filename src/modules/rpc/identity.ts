import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PrivateKey } from '@libp2p/interface';
import { PlatformError } from '../../common/errors.js';

/** Where a peer keeps its identity: `DATA_DIR/rpc/peer.key` (the libp2p protobuf encoding of an Ed25519 key). */
export function peerKeyPath(dataDir: string): string {
  return join(dataDir, 'rpc', 'peer.key');
}

/**
 * The peer's persistent Ed25519 key: read from `path`, or generated and written there with mode 0600 on
 * first use. A key file other users can read is refused (as SSH refuses such keys): whoever holds the key
 * is this peer for every provider that authorised its id.
 */
export async function loadOrCreatePeerKey(path: string): Promise<PrivateKey> {
  let bytes: Uint8Array | undefined;
  try {
    const info = await stat(path);
    if ((info.mode & 0o077) !== 0)
      throw new PlatformError(
        'FORBIDDEN',
        `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 ${path}`,
      );
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (bytes !== undefined) {
    try {
      const key = privateKeyFromProtobuf(bytes);
      if (key.type !== 'Ed25519') throw new Error(`a ${key.type} key, not Ed25519`);
      return key;
    } catch (error) {
      throw new PlatformError('BAD_REQUEST', `${path} is not a peer key: ${(error as Error).message}`);
    }
  }
  const key = await generateKeyPair('Ed25519');
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, privateKeyToProtobuf(key), { mode: 0o600, flag: 'wx' });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return key;
}

/** The peer id (`12D3KooW…`) of a key. */
export function peerIdOf(key: PrivateKey): string {
  return peerIdFromPrivateKey(key).toString();
}
