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

  /**
   * `scope` (optional; the registry passes the package's visibility at issue time) is covered by the
   * signature but not written into the URL: verifyScoped finds which of the possible scopes it was.
   */
  sign(path: string, expiresInSeconds: number, now = Date.now(), scope?: string): { query: string; expiresAt: number } {
    const expiresAt = Math.floor(now / 1000) + expiresInSeconds;
    return { query: `expires=${expiresAt}&signature=${this.signature(path, expiresAt, scope)}`, expiresAt };
  }

  verify(path: string, expires: unknown, signature: unknown, now = Date.now()): 'ok' | 'expired' | 'invalid' {
    return this.verifyScoped(path, expires, signature, [undefined], now).verdict;
  }

  /** Like verify, trying each candidate scope; answers the one the URL was signed with. */
  verifyScoped(
    path: string,
    expires: unknown,
    signature: unknown,
    scopes: ReadonlyArray<string | undefined>,
    now = Date.now(),
  ): { verdict: 'ok' | 'expired' | 'invalid'; scope?: string } {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(expires))
      return { verdict: 'invalid' };
    // Exactly the form sign() writes: Buffer.from(…, 'hex') silently drops whatever follows the first
    // non-hex character or odd digit, which would let many different strings pass as one signature.
    if (!/^[0-9a-f]{64}$/.test(signature)) return { verdict: 'invalid' };
    const given = Buffer.from(signature, 'hex');
    for (const scope of scopes) {
      const expected = Buffer.from(this.signature(path, Number(expires), scope), 'hex');
      if (timingSafeEqual(given, expected)) return { verdict: Number(expires) * 1000 < now ? 'expired' : 'ok', scope };
    }
    return { verdict: 'invalid' };
  }

  private signature(path: string, expiresAt: number, scope?: string): string {
    const scoped = scope === undefined ? '' : `\n${scope}`;
    return createHmac('sha256', this.key).update(`${path}\n${expiresAt}${scoped}`).digest('hex');
  }
}
