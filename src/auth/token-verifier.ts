import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { PlatformError } from '../common/errors.js';
import { ACCESS_LEVEL, isAccessLevel } from './access-level.js';
import type { Principal } from './principal.js';

/**
 * Verifies the platform's HS256 JWTs. Only HS256 is accepted (never `none` or an asymmetric algorithm a
 * forger could pick), `exp` is required, and the user id comes from `user_id` or `sub`. A token without a
 * `level` claim is LOGGED_IN; a level outside -1/0/1/2 counts as NOT_LOGGED_IN (fails closed). A token
 * with a `type` other than `access` (a refresh token) is refused. Revocation is checked by the jwt strategy.
 */
@Injectable()
export class TokenVerifier {
  constructor(
    private readonly jwt: JwtService,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly config: InfrastructureConfig,
  ) {}

  verify(token: string): Principal {
    let claims: Record<string, unknown>;
    try {
      claims = this.jwt.verify(token, { secret: this.config.jwtSecret ?? undefined, algorithms: ['HS256'] });
    } catch (error) {
      const reason = (error as Error).name === 'TokenExpiredError' ? 'token expired' : 'invalid token';
      throw new PlatformError('UNAUTHORIZED', `Authentication failed: ${reason}`);
    }
    if (typeof claims.exp !== 'number')
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: token has no exp claim');
    // A refresh token only buys new tokens at POST /auth/refresh; it never authenticates a request.
    if (claims.type !== undefined && claims.type !== 'access')
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: expected an access token');
    const userId = claims.user_id ?? claims.sub;
    if (
      (typeof userId !== 'string' && typeof userId !== 'number') ||
      String(userId).length === 0 ||
      String(userId).length > 191
    ) {
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: token has no user_id or sub claim');
    }
    const level = isAccessLevel(claims.level)
      ? claims.level
      : claims.level === undefined
        ? ACCESS_LEVEL.LOGGED_IN
        : ACCESS_LEVEL.NOT_LOGGED_IN;
    const tokenSaysAdmin = level === ACCESS_LEVEL.ADMIN || claims.is_admin === true;
    const username = typeof claims.username === 'string' && claims.username ? claims.username : String(userId);
    return {
      kind: 'user',
      subject: String(userId),
      platformUserId: String(userId),
      username: username.slice(0, 191),
      email: typeof claims.email === 'string' ? claims.email.slice(0, 320) : null,
      level: tokenSaysAdmin ? ACCESS_LEVEL.ADMIN : level,
      tokenSaysAdmin,
      permissions: [],
      strategy: 'jwt',
      expiresAt: claims.exp,
      ...(typeof claims.jti === 'string' && claims.jti ? { tokenId: claims.jti } : {}),
      ...(typeof claims.lid === 'string' && claims.lid ? { loginId: claims.lid.slice(0, 64) } : {}),
      ...(typeof claims.provider === 'string' && claims.provider ? { provider: claims.provider.slice(0, 64) } : {}),
    };
  }

  /** Mints a token with the configured secret (`tb token`, tests). */
  sign(claims: { userId: string; username: string; email?: string; admin?: boolean; ttlSeconds: number }): string {
    return this.jwt.sign(
      {
        user_id: claims.userId,
        sub: claims.userId,
        username: claims.username,
        ...(claims.email ? { email: claims.email } : {}),
        level: claims.admin ? ACCESS_LEVEL.ADMIN : ACCESS_LEVEL.LOGGED_IN,
      },
      { secret: this.config.jwtSecret ?? undefined, algorithm: 'HS256', expiresIn: claims.ttlSeconds },
    );
  }
}
