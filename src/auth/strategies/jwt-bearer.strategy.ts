import { Injectable } from '@nestjs/common';
import { API_KEY_PREFIX, bearerToken } from '../credentials.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';
import { TokenVerifier } from '../token-verifier.js';

/**
 * The platform's HS256 JWT in `Authorization: Bearer <token>` (the registry's only strategy). A bearer
 * value with the API key prefix is left to the API key strategy.
 */
@Injectable()
export class JwtBearerStrategy implements AuthStrategy {
  readonly name = 'jwt' as const;

  constructor(private readonly verifier: TokenVerifier) {}

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const token = bearerToken(request.headers.authorization);
    if (!token || token.startsWith(API_KEY_PREFIX)) return null;
    return this.verifier.verify(token);
  }
}
