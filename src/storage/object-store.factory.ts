import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { LocalObjectStore } from './local-object-store.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore, parseS3Url } from './s3-object-store.js';

/** Builds a store from its URL: `file:///abs/path` (or `file://./relative`) or `s3://…`. */
export function createObjectStore(url: string): ObjectStore {
  if (url.startsWith('file://')) {
    const rest = url.slice('file://'.length);
    return new LocalObjectStore(rest.startsWith('/') ? fileURLToPath(`file://${rest}`) : resolve(rest));
  }
  if (/^s3(\+https?)?:\/\//.test(url)) return new S3ObjectStore(parseS3Url(url));
  throw new Error(`Unsupported storage URL: ${url}`);
}
