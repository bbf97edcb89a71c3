import { PlatformError } from '../../common/errors.js';
import { decodeDataUrl } from './chat/chat-request.js';

export interface ImageFetchLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * Resolves an `image_url` to base64 for Ollama: data URLs are decoded in place; http(s) URLs are fetched
 * here (Ollama takes bytes only), streamed with a size cap so a huge or endless body is cut off early,
 * and must answer with an image media type.
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
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(limits.timeoutMs), redirect: 'follow' });
  } catch (error) {
    throw new PlatformError('BAD_REQUEST', `The image at ${url} could not be fetched (${(error as Error).message})`, [
      { field: 'image_url.url', message: 'image fetch failed' },
    ]);
  }
  const imageError = (message: string) =>
    new PlatformError('BAD_REQUEST', `The image at ${url} ${message}`, [{ field: 'image_url.url', message }]);
  if (!response.ok) {
    await response.body?.cancel();
    throw imageError(`answered HTTP ${response.status}`);
  }
  const type = response.headers.get('content-type') ?? '';
  if (!/^image\//i.test(type)) {
    await response.body?.cancel();
    throw imageError(`is not an image (content-type "${type || 'none'}")`);
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limits.maxBytes) {
    await response.body?.cancel();
    throw imageError(`is larger than ${limits.maxBytes} bytes`);
  }
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > limits.maxBytes) throw imageError(`is larger than ${limits.maxBytes} bytes`);
      parts.push(Buffer.from(chunk));
    }
  } catch (error) {
    if (error instanceof PlatformError) throw error;
    throw imageError(`could not be read (${(error as Error).message})`);
  }
  return Buffer.concat(parts).toString('base64');
}
