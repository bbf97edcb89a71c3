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

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const token = bearerToken(request.headers.authorization);
    if (!token) return null;
    const principal = this.verifier.verify(token);
    await assertTokenLive(this.revocations, principal);
    return principal;
  }
}
