import { lookup } from 'node:dns';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { PlatformError } from '../../common/errors.js';
import { decodeDataUrl } from './chat/chat-request.js';

export interface ImageFetchLimits {
  maxBytes: number;
  timeoutMs: number;
  /** GATEWAY_IMAGE_ALLOW_PRIVATE: also fetch from loopback and private networks (an intranet image server). */
  allowPrivate: boolean;
}

/**
 * Resolves an `image_url` to base64 for Ollama: data URLs are decoded in place; http(s) URLs are fetched
 * here (Ollama takes bytes only), streamed with a size cap so a huge or endless body is cut off early,
 * and must answer with an image media type. Only public addresses are fetched unless configured
 * otherwise, so a key holder cannot make the gateway read internal services (SSRF).
 */
export async function resolveImageUrl(url: string, limits: ImageFetchLimits): Promise<string> {
  if (url.startsWith('data:')) {
    const base64 = decodeDataUrl(url);
    if (Math.floor((base64.length * 3) / 4) > limits.maxBytes) {
      throw new PlatformError('BAD_REQUEST', `The image is larger than ${limits.maxBytes} bytes`, [
        { field: 'image_url.url', message: 'image too large' },
      ]);
    }
    return base64;
  }
  if (!/^https?:\/\//i.test(url)) {
    throw new PlatformError('BAD_REQUEST', 'An image_url must be a data: URL or an http(s) URL', [
      { field: 'image_url.url', message: 'unsupported URL scheme' },
    ]);
  }
  const imageError = (message: string) =>
    new PlatformError('BAD_REQUEST', `The image at ${url} ${message}`, [{ field: 'image_url.url', message }]);
  let response: IncomingMessage;
  try {
    response = await get(new URL(url), limits, MAX_REDIRECTS);
  } catch (error) {
    if (error instanceof PlatformError) throw error;
    throw imageError(`could not be fetched (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.destroy();
    throw imageError(`answered HTTP ${status}`);
  }
  const type = String(response.headers['content-type'] ?? '');
  if (!/^image\//i.test(type)) {
    response.destroy();
    throw imageError(`is not an image (content-type "${type || 'none'}")`);
  }
  if (Number(response.headers['content-length'] ?? NaN) > limits.maxBytes) {
    response.destroy();
    throw imageError(`is larger than ${limits.maxBytes} bytes`);
  }
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      size += (chunk as Buffer).byteLength;
      if (size > limits.maxBytes) throw imageError(`is larger than ${limits.maxBytes} bytes`);
      parts.push(chunk as Buffer);
    }
  } catch (error) {
    response.destroy();
    if (error instanceof PlatformError) throw error;
    throw imageError(`could not be read (${(error as Error).message})`);
  }
  return Buffer.concat(parts).toString('base64');
}

const MAX_REDIRECTS = 3;

/**
 * Addresses a user's image URL must not reach (loopback, private, link-local incl. cloud metadata at
 * 169.254.169.254, carrier-grade NAT, multicast, reserved), unless GATEWAY_IMAGE_ALLOW_PRIVATE is set.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !NON_PUBLIC.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function refusedAddress(url: URL, address: string): PlatformError {
  return new PlatformError(
    'BAD_REQUEST',
    `The image at ${url.href} resolves to a private address (${address}); the gateway fetches public URLs only`,
    [{ field: 'image_url.url', message: 'private address' }],
  );
}

/**
 * One GET that checks the address it connects to (in the socket's own lookup, so a DNS answer cannot
 * change between check and connect), following up to `redirects` redirects, each checked the same way.
 */
function get(url: URL, limits: ImageFetchLimits, redirects: number): Promise<IncomingMessage> {
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!limits.allowPrivate && isIP(literal) && !isPublicAddress(literal))
    return Promise.reject(refusedAddress(url, literal));
  const checkedLookup: LookupFunction = (hostname, options, callback) => {
    lookup(hostname, { ...options, all: false }, (error, address, family) => {
      if (error) return callback(error, address, family);
      if (!limits.allowPrivate && !isPublicAddress(address))
        return callback(refusedAddress(url, address) as never, address, family);
      callback(null, address, family);
    });
  };
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsGet : httpGet)(
      url,
      { lookup: checkedLookup, signal: AbortSignal.timeout(limits.timeoutMs), headers: { accept: 'image/*' } },
      (response) => {
        const location = response.headers.location;
        if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
          response.destroy();
          if (redirects === 0) return reject(new Error('too many redirects'));
          const next = new URL(location, url);
          if (next.protocol !== 'http:' && next.protocol !== 'https:')
            return reject(new Error('redirect to another scheme'));
          return resolve(get(next, limits, redirects - 1));
        }
        resolve(response);
      },
    );
    request.on('error', (error) =>
      reject(
        error instanceof PlatformError
          ? error
          : (error as Error & { cause?: unknown }).cause instanceof PlatformError
            ? (error as { cause: PlatformError }).cause
            : error,
      ),
    );
  });
}
