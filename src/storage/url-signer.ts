import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed, time-limited download addresses served by the platform itself. The signature covers the
 * path and the expiry, so neither can be changed; the key is derived from the platform secret so the
 * raw JWT secret never signs anything but tokens.
 */
export class UrlSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('toolbox-platform/signed-url/v1').digest();
  }

  sign(path: string, expiresInSeconds: number, now = Date.now()): { query: string; expiresAt: number } {
    const expiresAt = Math.floor(now / 1000) + expiresInSeconds;
    return { query: `expires=${expiresAt}&signature=${this.signature(path, expiresAt)}`, expiresAt };
  }

  verify(path: string, expires: unknown, signature: unknown, now = Date.now()): 'ok' | 'expired' | 'invalid' {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(expires)) return 'invalid';
    // Exactly the form sign() writes: Buffer.from(…, 'hex') silently drops whatever follows the first
    // non-hex character or odd digit, which would let many different strings pass as one signature.
    if (!/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    const expected = Buffer.from(this.signature(path, Number(expires)), 'hex');
    const given = Buffer.from(signature, 'hex');
    if (!timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }

  private signature(path: string, expiresAt: number): string {
    return createHmac('sha256', this.key).update(`${path}\n${expiresAt}`).digest('hex');
  }
}
