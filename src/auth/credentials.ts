import { PlatformError } from '../common/errors.js';
import type { CredentialRequest } from './principal.js';

/** The token of an `Authorization: Bearer <token>` header; null without the header, 401 for another scheme. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new PlatformError('UNAUTHORIZED', 'Authorization header must be "Bearer <token>"');
  return match[1];
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function headerValue(request: CredentialRequest, name: string): string | undefined {
  return single(request.headers[name]);
}

/** One cookie's value from the Cookie header (URL-decoded), or null. */
export function cookieValue(request: CredentialRequest, name: string): string | null {
  const header = single(request.headers.cookie);
  if (!header) return null;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0 || part.slice(0, separator).trim() !== name) continue;
    const raw = part
      .slice(separator + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}
