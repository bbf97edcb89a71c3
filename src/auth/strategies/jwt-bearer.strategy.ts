import { Injectable } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import { API_KEY_PREFIX, bearerToken } from '../credentials.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';
import { Revocations } from '../shared-store/revocations.js';
import { TokenVerifier } from '../token-verifier.js';

/**
 * The platform's HS256 JWT in `Authorization: Bearer <token>` (the registry's only strategy). A bearer
 * value with the API key prefix is left to the API key strategy. A token whose `jti` was revoked (logout,
 * refresh rotation) is refused: the revocation store is shared, so every process refuses it at once.
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
    if (!token || token.startsWith(API_KEY_PREFIX)) return null;
    const principal = this.verifier.verify(token);
    if (principal.tokenId && (await this.revocations.isRevoked('token', principal.tokenId)))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: token has been revoked');
    return principal;
  }
}
