import { createReadStream } from 'node:fs';
import { stat as statFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  ObjectNotFoundError,
  assertSafeKey,
  type ByteRange,
  type ObjectInfo,
  type ObjectStore,
} from './object-store.js';

export interface S3StoreOptions {
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Key prefix inside the bucket, so several platforms can share one. */
  prefix: string;
  createBucket: boolean;
}

/**
 * `s3://KEY:SECRET@HOST[:PORT]/BUCKET?region=us-east-1&path_style=true&tls=false&prefix=p&create_bucket=true`.
 * Without a host (`s3:///bucket`) the AWS endpoint of the region and the default credential chain apply.
 */
export function parseS3Url(url: string): S3StoreOptions {
  // Parsed under a non-special scheme: as `http:` the host-less `s3:///bucket` would read the bucket as the host.
  const parsed = new URL(url.replace(/^s3(\+https?)?:/, 's3:'));
  const params = parsed.searchParams;
  const bucket = decodeURIComponent(parsed.pathname.replace(/^\/+/, '').split('/')[0] ?? '');
  if (!bucket) throw new Error('S3 storage URL needs a bucket: s3://KEY:SECRET@HOST:PORT/BUCKET');
  const tls = url.startsWith('s3+https:') || (!url.startsWith('s3+http:') && params.get('tls') !== 'false');
  return {
    endpoint: parsed.hostname ? `${tls ? 'https' : 'http'}://${parsed.host}` : undefined,
    bucket,
    region: params.get('region') ?? 'us-east-1',
    accessKeyId: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    secretAccessKey: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    forcePathStyle: params.get('path_style') !== 'false',
    prefix: (params.get('prefix') ?? '').replace(/^\/+|\/+$/g, ''),
    createBucket: params.get('create_bucket') === 'true',
  };
}

export class S3ObjectStore implements ObjectStore {
  readonly name: string;
  private readonly client: S3Client;
  private bucketReady: Promise<void> | null = null;

  constructor(private readonly options: S3StoreOptions) {
    this.name = `s3:${options.bucket}@${options.endpoint ?? `aws:${options.region}`}`;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
      maxAttempts: 2,
      // The SDK's default CRC trailers use aws-chunked uploads that many S3-compatible stores (older MinIO,
      // Ceph, s3rver) store verbatim, framing included; checksums only where an operation requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async putFile(key: string, filePath: string, contentType = 'application/octet-stream'): Promise<void> {
    await this.ensureBucket();
    const { size } = await statFile(filePath);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.keyOf(key),
        Body: createReadStream(filePath),
        ContentLength: size,
        ContentType: contentType,
      }),
    );
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.keyOf(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return response.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    try {
      const response = await this.client.send(
        new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key) }),
      );
      return { size: Number(response.ContentLength ?? 0) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(key) }));
  }

  async health(): Promise<void> {
    await this.ensureBucket();
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }

  destroy(): void {
    this.client.destroy();
  }

  private ensureBucket(): Promise<void> {
    if (!this.options.createBucket) return Promise.resolve();
    this.bucketReady ??= this.client
      .send(new CreateBucketCommand({ Bucket: this.options.bucket }))
      .then(() => undefined)
      .catch((error) => {
        const name = (error as { name?: string }).name;
        if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') return;
        this.bucketReady = null;
        throw error;
      });
    return this.bucketReady;
  }

  private keyOf(key: string): string {
    assertSafeKey(key);
    return this.options.prefix ? `${this.options.prefix}/${key}` : key;
  }
}

function isNotFound(error: unknown): boolean {
  const candidate = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    candidate?.name === 'NoSuchKey' || candidate?.name === 'NotFound' || candidate?.$metadata?.httpStatusCode === 404
  );
}
