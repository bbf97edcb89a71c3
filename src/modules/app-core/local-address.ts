import { isIP } from 'node:net';

/** The address without an IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` → `10.0.0.1`). */
export function normaliseAddress(address: string): string {
  const trimmed = address.trim();
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(trimmed) ? trimmed.slice(7) : trimmed;
}

/**
 * Whether an address is loopback, private (RFC 1918, RFC 4193 unique local), link-local or
 * carrier-grade NAT: places no public geolocation can describe.
 */
export function isLocalAddress(address: string): boolean {
  const ip = normaliseAddress(address);
  const family = isIP(ip);
  if (family === 4) {
    const [a, b] = ip.split('.').map(Number);
    return (
      a === 127 ||
      a === 10 ||
      a === 0 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (family === 6) {
    const lower = ip.toLowerCase();
    return lower === '::1' || lower === '::' || /^f[cd][0-9a-f]{2}:/.test(lower) || /^fe[89ab][0-9a-f]:/.test(lower);
  }
  return false;
}
