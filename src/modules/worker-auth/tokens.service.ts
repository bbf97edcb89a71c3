import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AUTH_STORE, type AuthStore } from '../../auth/shared-store/auth-store.js';
import { Revocations } from '../../auth/shared-store/revocations.js';
import { TokenVerifier } from '../../auth/token-verifier.js';
import type { Principal } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { PLATFORM_CONFIG } from '../../config/config.module.js';
import type { PlatformConfig } from '../../config/config.js';
import type { UserEntity } from './entities/user.entity.js';
import { UsersService } from './users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

/** What every login answers (seed 02 B, the original's bundle). */
export interface TokenBundle {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

/**
 * Mints the platform's tokens: HS256 with PLATFORM_JWT_SECRET, the same secret the registry verifies with.
 * Access tokens (15 min) carry sub, user_id, username, email, level, provider, type "access", jti. Refresh
 * tokens (7 days) carry sub, provider, type "refresh", jti, and are single use: each lives in the shared
 * store until used, so `refresh` rotates (the used one is revoked) and a replayed one is refused.
 */
@Injectable()
export class TokensService {
  private readonly secret: string;

  constructor(
    private readonly jwt: JwtService,
    private readonly verifier: TokenVerifier,
    private readonly revocations: Revocations,
    private readonly users: UsersService,
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
  ) {
    if (!config.jwtSecret) throw new Error('WorkerAuth needs PLATFORM_JWT_SECRET');
    this.secret = config.jwtSecret;
  }

  async issue(user: UserEntity, provider: string): Promise<TokenBundle> {
    const access = this.jwt.sign(
      {
        sub: user.id,
        user_id: user.id,
        username: user.username,
        email: user.email,
        level: user.level,
        provider,
        type: 'access',
        jti: randomUUID(),
      },
      { secret: this.secret, algorithm: 'HS256', expiresIn: this.options.accessTokenTtlSeconds },
    );
    const refreshJti = randomUUID();
    const refresh = this.jwt.sign(
      { sub: user.id, provider, type: 'refresh', jti: refreshJti },
      { secret: this.secret, algorithm: 'HS256', expiresIn: this.options.refreshTokenTtlSeconds },
    );
    await this.store.put(refreshKey(refreshJti), user.id, this.options.refreshTokenTtlSeconds * 1000);
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: this.options.accessTokenTtlSeconds,
      token_type: 'Bearer',
    };
  }

  /** A new bundle for a live refresh token, which is used up; the user's current level goes into it. */
  async refresh(refreshToken: string): Promise<{ bundle: TokenBundle; user: UserEntity }> {
    const claims = this.decode(refreshToken, 'refresh');
    // Single use: of two concurrent refreshes with the same token exactly one wins.
    const owner = await this.store.take(refreshKey(claims.jti));
    if (owner === null || owner !== claims.sub)
      throw new PlatformError('UNAUTHORIZED', 'Refresh token already used or revoked');
    await this.revocations.revoke('token', claims.jti, claims.exp);
    const user = await this.users.findById(claims.sub);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'The token names no existing user');
    return { bundle: await this.issue(user, claims.provider ?? 'refresh'), user };
  }

  /** A live access token's principal (signature, expiry, type, revocation), or UNAUTHORIZED. */
  async verifyAccess(token: string): Promise<Principal> {
    const principal = this.verifier.verify(token);
    if (principal.tokenId && (await this.revocations.isRevoked('token', principal.tokenId)))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: token has been revoked');
    return principal;
  }

  /**
   * Logout of one token (access or refresh): only a genuine token of ours is revoked (signature checked;
   * an expired one needs nothing). Returns whether something was revoked.
   */
  async revoke(token: string): Promise<boolean> {
    let claims: Record<string, unknown>;
    try {
      claims = this.jwt.verify(token, { secret: this.secret, algorithms: ['HS256'] });
    } catch {
      return false;
    }
    if (typeof claims.jti !== 'string' || typeof claims.exp !== 'number') return false;
    if (claims.type === 'refresh') await this.store.delete(refreshKey(claims.jti));
    await this.revocations.revoke('token', claims.jti, claims.exp);
    return true;
  }

  private decode(token: string, type: 'refresh'): { sub: string; jti: string; exp: number; provider?: string } {
    let claims: Record<string, unknown>;
    try {
      claims = this.jwt.verify(token, { secret: this.secret, algorithms: ['HS256'] });
    } catch (error) {
      const reason = (error as Error).name === 'TokenExpiredError' ? 'token expired' : 'invalid token';
      throw new PlatformError('UNAUTHORIZED', `Authentication failed: ${reason}`);
    }
    if (claims.type !== type) throw new PlatformError('UNAUTHORIZED', `Expected a ${type} token`);
    if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string' || typeof claims.exp !== 'number')
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: invalid token');
    return {
      sub: claims.sub,
      jti: claims.jti,
      exp: claims.exp,
      ...(typeof claims.provider === 'string' ? { provider: claims.provider } : {}),
    };
  }
}

function refreshKey(jti: string): string {
  return `refresh:${jti}`;
}
