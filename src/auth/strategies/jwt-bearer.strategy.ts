import { Injectable } from '@nestjs/common';
import { bearerToken } from '../credentials.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';
import { assertTokenLive } from '../shared-store/live-credentials.js';
import { Revocations } from '../shared-store/revocations.js';
import { TokenVerifier } from '../token-verifier.js';

/**
 * The platform's HS256 JWT in `Authorization: Bearer <token>` (the registry's only strategy). A token whose `jti` or login was revoked
 * (logout, refresh-token reuse) is refused: the revocation store is shared, so every process refuses it at once.
 */
@Injectable()
export class JwtBearerStrategy implements AuthStrategy {
  readonly name = 'jwt' as const;

  constructor(
    private readonly verifier: TokenVerifier,
    private readonly revocations: Revocations,
  ) {}

  /** Null at once without a Bearer token (no promise on the hot path of open routes). */
  authenticate(request: CredentialRequest): Promise<Principal | null> | null {
    const header = request.headers.authorization;
    if (!header) return null;
    return this.verified(header);
  }

  /** A header of another scheme or a bad token rejects (never a synchronous throw). */
  private async verified(header: string): Promise<Principal> {
    const principal = this.verifier.verify(bearerToken(header)!);
    await assertTokenLive(this.revocations, principal);
    return principal;
  }
}
