import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
}) => S3rverInstance;

// s3rver ships CommonJS without type declarations.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

/**
 * A real S3 API (s3rver) on a free loopback port over a temp directory, so the production S3 client runs
 * unchanged. It accepts the credentials it documents: `s3://S3RVER:S3RVER@127.0.0.1:PORT/BUCKET?tls=false`.
 */
export async function startS3Server(): Promise<{ port: number; stop(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), 'tb-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  return {
    port,
    stop: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
