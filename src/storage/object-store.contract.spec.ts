import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { LocalObjectStore } from './local-object-store.js';
import { createObjectStore } from './object-store.factory.js';
import { ObjectNotFoundError, type ObjectStore } from './object-store.js';
import { S3ObjectStore, parseS3Url } from './s3-object-store.js';
import { startS3Server } from '../../test/support/s3-server.js';

/**
 * One contract, two drivers: the local directory and the S3 driver against a real S3-protocol server
 * (s3rver on a free port, test/support/s3-server.ts), so the production client code runs unchanged.
 */

interface StoreUnderTest {
  store: ObjectStore;
  dispose(): Promise<void>;
}

async function openLocalStore(): Promise<StoreUnderTest> {
  const root = await mkdtemp(join(tmpdir(), 'tb-local-store-'));
  return { store: new LocalObjectStore(root), dispose: () => rm(root, { recursive: true, force: true }) };
}

async function openS3Store(): Promise<StoreUnderTest> {
  const server = await startS3Server();
  // s3rver accepts the credentials it documents; the bucket is created on first use, as in production.
  const store = new S3ObjectStore(
    parseS3Url(`s3://S3RVER:S3RVER@127.0.0.1:${server.port}/contract?tls=false&prefix=platform&create_bucket=true`),
  );
  return {
    store,
    dispose: async () => {
      store.destroy();
      await server.stop();
    },
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe.each([
  ['LocalObjectStore', openLocalStore],
  ['S3ObjectStore (s3rver)', openS3Store],
])('ObjectStore contract: %s', (_driver, open) => {
  let subject: StoreUnderTest;
  let store: ObjectStore;
  let scratch: string;
  let content: Buffer;
  let contentFile: string;

  beforeAll(async () => {
    subject = await open();
    store = subject.store;
    scratch = await mkdtemp(join(tmpdir(), 'tb-store-contract-'));
    // Larger than one network chunk, so streaming and ranges are exercised for real.
    content = randomBytes(200_000);
    contentFile = join(scratch, 'content.bin');
    await writeFile(contentFile, content);
  });

  afterAll(async () => {
    await subject?.dispose();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  async function writeScratch(name: string, data: Buffer | string): Promise<string> {
    const path = join(scratch, name);
    await writeFile(path, data);
    return path;
  }

  it('returns the exact bytes that were put', async () => {
    await store.putFile('packages/round-trip/1.0.0.zip', contentFile, 'application/zip');

    expect((await readAll(await store.get('packages/round-trip/1.0.0.zip'))).equals(content)).toBe(true);
  });

  it('returns exactly the requested slice for a byte range, end inclusive', async () => {
    await store.putFile('packages/range/1.0.0.zip', contentFile);

    const slice = await readAll(await store.get('packages/range/1.0.0.zip', { start: 1000, end: 70_999 }));

    expect(slice.length).toBe(70_000);
    expect(slice.equals(content.subarray(1000, 71_000))).toBe(true);
  });

  it('returns a one-byte slice when start equals end', async () => {
    await store.putFile('packages/range/one-byte.zip', contentFile);

    const slice = await readAll(await store.get('packages/range/one-byte.zip', { start: 5, end: 5 }));

    expect([...slice]).toEqual([content[5]]);
  });

  it('reports the size of a stored object', async () => {
    await store.putFile('builds/stat/app.bin', contentFile);

    expect(await store.stat('builds/stat/app.bin')).toEqual({ size: content.length });
  });

  it('reports null for the size of a missing object', async () => {
    expect(await store.stat('builds/stat/missing.bin')).toBeNull();
  });

  it('reports the size of an empty object as zero', async () => {
    await store.putFile('builds/stat/empty.bin', await writeScratch('empty.bin', Buffer.alloc(0)));

    expect(await store.stat('builds/stat/empty.bin')).toEqual({ size: 0 });
  });

  it('throws ObjectNotFoundError when getting a missing object', async () => {
    await expect(store.get('packages/missing/1.0.0.zip')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('names the missing key in ObjectNotFoundError', async () => {
    await expect(store.get('packages/missing/2.0.0.zip')).rejects.toMatchObject({ key: 'packages/missing/2.0.0.zip' });
  });

  it('deletes an object so that it is gone afterwards', async () => {
    await store.putFile('patches/delete/a.patch', contentFile);

    await store.delete('patches/delete/a.patch');

    expect(await store.stat('patches/delete/a.patch')).toBeNull();
    await expect(store.get('patches/delete/a.patch')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('treats deleting an object twice, or one that never existed, as success', async () => {
    await store.putFile('patches/delete/b.patch', contentFile);
    await store.delete('patches/delete/b.patch');

    await expect(store.delete('patches/delete/b.patch')).resolves.toBeUndefined();
    await expect(store.delete('patches/delete/never-existed.patch')).resolves.toBeUndefined();
  });

  it('replaces the content when a key is put again', async () => {
    await store.putFile('packages/overwrite/1.0.0.zip', contentFile);

    await store.putFile('packages/overwrite/1.0.0.zip', await writeScratch('replacement.bin', 'the second version'));

    expect((await readAll(await store.get('packages/overwrite/1.0.0.zip'))).toString()).toBe('the second version');
    expect(await store.stat('packages/overwrite/1.0.0.zip')).toEqual({ size: 'the second version'.length });
  });

  it('keeps objects under different keys apart', async () => {
    await store.putFile('packages/apart/a.zip', await writeScratch('a.bin', 'alpha'));
    await store.putFile('packages/apart/b.zip', await writeScratch('b.bin', 'beta'));

    expect((await readAll(await store.get('packages/apart/a.zip'))).toString()).toBe('alpha');
    expect((await readAll(await store.get('packages/apart/b.zip'))).toString()).toBe('beta');
  });

  it.each([
    '../escape.zip',
    'packages/../../etc/passwd',
    'packages/./x.zip',
    '/absolute.zip',
    'packages//x.zip',
    'packages\\x.zip',
    '',
  ])('refuses the unsafe key %j on every operation', async (key) => {
    await expect(store.putFile(key, contentFile)).rejects.toThrow(/Unsafe object key/);
    await expect(store.get(key)).rejects.toThrow(/Unsafe object key/);
    await expect(store.stat(key)).rejects.toThrow(/Unsafe object key/);
    await expect(store.delete(key)).rejects.toThrow(/Unsafe object key/);
  });

  it('passes its health check', async () => {
    await expect(store.health()).resolves.toBeUndefined();
  });

  it('has a name for logs that says which driver it is', () => {
    expect(store.name).toMatch(/^(local|s3):/);
  });
});

describe('LocalObjectStore directories', () => {
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'tb-local-directories-'));
  });

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('creates its root and nested key directories on first use', async () => {
    const store = new LocalObjectStore(join(scratch, 'new', 'root'));
    const file = join(scratch, 'nested.txt');
    await writeFile(file, 'nested');

    await store.health();
    await store.putFile('a/b/c/d.zip', file);

    expect(await store.stat('a/b/c/d.zip')).toEqual({ size: 6 });
  });

  it('puts objects under many new directories at once', async () => {
    const store = new LocalObjectStore(join(scratch, 'concurrent'));
    const file = join(scratch, 'concurrent.txt');
    await writeFile(file, 'x');

    await Promise.all(
      Array.from({ length: 20 }, (_, index) => store.putFile(`shared/parent/${index % 3}/${index}.zip`, file)),
    );

    expect(await store.stat('shared/parent/2/17.zip')).toEqual({ size: 1 });
  });

  it('fails its health check when its root sits under a file', async () => {
    const file = join(scratch, 'plain-file');
    await writeFile(file, 'not a directory');

    await expect(new LocalObjectStore(join(file, 'objects')).health()).rejects.toThrow();
  });

  // procfs answers ENOENT to every mkdir below it, which sends Node's recursive mkdir into an endless loop.
  (process.platform === 'linux' ? it : it.skip)(
    'fails, instead of hanging, where its directory cannot be created',
    async () => {
      const store = new LocalObjectStore('/proc/toolbox-not-writable/objects');
      const file = join(scratch, 'procfs.txt');
      await writeFile(file, 'x');

      await expect(store.health()).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(store.putFile('packages/a.zip', file)).rejects.toMatchObject({ code: 'ENOENT' });
    },
    5000,
  );
});

describe('S3ObjectStore in a shared bucket', () => {
  let server: { port: number; stop(): Promise<void> };
  const stores: S3ObjectStore[] = [];
  let scratch: string;

  function storeWithPrefix(prefix: string): S3ObjectStore {
    const store = new S3ObjectStore(
      parseS3Url(`s3://S3RVER:S3RVER@127.0.0.1:${server.port}/shared?tls=false&create_bucket=true&prefix=${prefix}`),
    );
    stores.push(store);
    return store;
  }

  beforeAll(async () => {
    server = await startS3Server();
    scratch = await mkdtemp(join(tmpdir(), 'tb-s3-prefix-'));
  });

  afterAll(async () => {
    stores.forEach((store) => store.destroy());
    await server?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('keeps objects under its prefix inside the bucket', async () => {
    const file = join(scratch, 'a.txt');
    await writeFile(file, 'tenant a');

    await storeWithPrefix('tenant-a').putFile('packages/x.zip', file);

    expect(await storeWithPrefix('').stat('tenant-a/packages/x.zip')).toEqual({ size: 'tenant a'.length });
  });

  it('does not see objects of another prefix in the same bucket', async () => {
    const file = join(scratch, 'b.txt');
    await writeFile(file, 'tenant b');
    await storeWithPrefix('tenant-b').putFile('packages/y.zip', file);

    expect(await storeWithPrefix('tenant-c').stat('packages/y.zip')).toBeNull();
  });

  it('fails its health check when the server cannot be reached', async () => {
    const unreachable = new S3ObjectStore(parseS3Url('s3://S3RVER:S3RVER@127.0.0.1:1/shared?tls=false'));
    stores.push(unreachable);

    await expect(unreachable.health()).rejects.toThrow();
  });
});

describe('createObjectStore', () => {
  it('opens a local store for an absolute file URL', () => {
    expect(createObjectStore('file:///var/lib/toolbox/objects').name).toBe('local:/var/lib/toolbox/objects');
  });

  it('decodes a percent-encoded file URL', () => {
    expect(createObjectStore('file:///srv/my%20objects').name).toBe('local:/srv/my objects');
  });

  it('resolves a relative file URL against the working directory', () => {
    expect(createObjectStore('file://./data/objects').name).toBe(`local:${join(process.cwd(), 'data', 'objects')}`);
  });

  it('opens an S3 store for every S3 scheme', () => {
    for (const url of [
      's3://k:s@minio:9000/bucket',
      's3+http://k:s@minio:9000/bucket',
      's3+https://k:s@minio:9000/bucket',
    ]) {
      const store = createObjectStore(url);
      expect(store).toBeInstanceOf(S3ObjectStore);
      (store as S3ObjectStore).destroy();
    }
  });

  it('names the S3 store after its bucket and endpoint', () => {
    const store = createObjectStore('s3+http://k:s@minio:9000/artifacts') as S3ObjectStore;
    store.destroy();

    expect(store.name).toBe('s3:artifacts@http://minio:9000');
  });

  it('rejects an unsupported storage URL', () => {
    expect(() => createObjectStore('ftp://example.com/objects')).toThrow(/Unsupported storage URL/);
  });
});

describe('parseS3Url', () => {
  it('reads endpoint, bucket, credentials and options from a MinIO-style URL', () => {
    expect(
      parseS3Url(
        's3://minio:secret@minio.internal:9000/artifacts?region=eu-west-1&tls=false&prefix=platform&create_bucket=true',
      ),
    ).toEqual({
      endpoint: 'http://minio.internal:9000',
      bucket: 'artifacts',
      region: 'eu-west-1',
      accessKeyId: 'minio',
      secretAccessKey: 'secret',
      forcePathStyle: true,
      prefix: 'platform',
      createBucket: true,
    });
  });

  it('uses https by default', () => {
    expect(parseS3Url('s3://key:secret@storage.example.com/bucket').endpoint).toBe('https://storage.example.com');
  });

  it('uses http for the s3+http scheme even without tls=false', () => {
    expect(parseS3Url('s3+http://key:secret@127.0.0.1:9000/bucket').endpoint).toBe('http://127.0.0.1:9000');
  });

  it('uses https for the s3+https scheme even with tls=false', () => {
    expect(parseS3Url('s3+https://key:secret@r2.example.com/bucket?tls=false').endpoint).toBe('https://r2.example.com');
  });

  it('keeps path-style addressing unless path_style=false', () => {
    expect(parseS3Url('s3://k:s@host/bucket').forcePathStyle).toBe(true);
    expect(parseS3Url('s3://k:s@host/bucket?path_style=false').forcePathStyle).toBe(false);
  });

  it('trims slashes around the prefix', () => {
    expect(parseS3Url('s3://k:s@host/bucket?prefix=/tenant/a/').prefix).toBe('tenant/a');
  });

  it('defaults to no prefix, us-east-1 and no bucket creation', () => {
    expect(parseS3Url('s3://k:s@host/bucket')).toMatchObject({ prefix: '', region: 'us-east-1', createBucket: false });
  });

  it('decodes percent-encoded credentials', () => {
    expect(parseS3Url('s3://AKIA%2Fkey:p%40ss%3Aword@host/bucket')).toMatchObject({
      accessKeyId: 'AKIA/key',
      secretAccessKey: 'p@ss:word',
    });
  });

  it('leaves the endpoint and credentials to AWS defaults when there is no host', () => {
    expect(parseS3Url('s3:///bucket?region=eu-central-1')).toEqual({
      endpoint: undefined,
      bucket: 'bucket',
      region: 'eu-central-1',
      accessKeyId: undefined,
      secretAccessKey: undefined,
      forcePathStyle: true,
      prefix: '',
      createBucket: false,
    });
  });

  it('takes only the first path segment as the bucket', () => {
    expect(parseS3Url('s3://k:s@host/bucket/ignored').bucket).toBe('bucket');
  });

  it('rejects a URL without a bucket', () => {
    expect(() => parseS3Url('s3://k:s@host')).toThrow(/needs a bucket/);
    expect(() => parseS3Url('s3://k:s@host/')).toThrow(/needs a bucket/);
  });
});
