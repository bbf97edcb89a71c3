import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AUTH_STORE, type AuthStore } from '../../auth/shared-store/auth-store.js';
import { SessionCookies } from '../../auth/session-cookie/session-cookies.js';
import { assertTokenLive, loginIdOf } from '../../auth/shared-store/live-credentials.js';
import { Revocations } from '../../auth/shared-store/revocations.js';
import { TokenVerifier } from '../../auth/token-verifier.js';
import type { Principal } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig } from '../../config/config.js';
import type { UserEntity } from './entities/user.entity.js';
import { UsersService } from './users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

/** What every login answers (the original's bundle). */
export interface TokenBundle {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

/**
 * One refresh-token family: the refresh tokens one login has been issued, one after the other. Only the
 * newest (`current`) buys a new bundle; presenting any older one is reuse (a stolen copy, or the thief's
 * copy of a token the owner already used) and ends the login. `previous` and `rotated_at` are kept so that a
 * short grace window for two tabs refreshing at once can accept the token just rotated away.
 */
interface RefreshFamily {
  user_id: string;
  current: string;
  previous: string | null;
  rotated_at: number;
}

/**
 * Mints the platform's tokens: HS256 with PLATFORM_JWT_SECRET, the same secret the registry verifies with.
 * Access tokens (15 min) carry sub, user_id, username, email, level, provider, type "access", jti and `lid`,
 * the login they belong to. Refresh tokens (7 days) carry sub, provider, type "refresh", jti and `lid`, and
 * rotate: the login's family record (shared store) names the one live refresh token; using it issues the next
 * one, and presenting a rotated-away token again revokes the whole login (OAuth 2.0 Security BCP, refresh
 * token rotation): its access tokens, its family and its cookies, on every worker.
 */
@Injectable()
export class TokensService {
  private readonly secret: string;

  constructor(
    private readonly jwt: JwtService,
    private readonly verifier: TokenVerifier,
    private readonly revocations: Revocations,
    private readonly sessions: SessionCookies,
    private readonly users: UsersService,
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Inject(INFRASTRUCTURE_CONFIG) infrastructure: InfrastructureConfig,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
  ) {
    if (!infrastructure.jwtSecret) throw new Error('WorkerAuth needs PLATFORM_JWT_SECRET');
    this.secret = infrastructure.jwtSecret;
  }

  /** A new login's bundle (OAuth, magic link): a new login id and refresh family. */
  async issue(user: UserEntity, provider: string): Promise<TokenBundle & { login_id: string }> {
    const loginId = randomUUID();
    const { bundle, refreshJti } = this.mint(user, provider, loginId);
    await this.putFamily(loginId, { user_id: user.id, current: refreshJti, previous: null, rotated_at: Date.now() });
    return { ...bundle, login_id: loginId };
  }

  /**
   * A new bundle of the same login for its live refresh token, which is used up; the user's current level goes
   * into it. A rotated-away (reused) token ends the login.
   */
  async refresh(refreshToken: string): Promise<{ bundle: TokenBundle; user: UserEntity }> {
    const claims = this.decode(refreshToken, 'refresh');
    if (!claims.lid) return this.refreshUntracked(claims);
    const family = await this.takeFamily(claims.lid);
    if (!family || family.user_id !== claims.sub)
      throw new PlatformError('UNAUTHORIZED', 'Refresh token already used or revoked');
    if (family.current !== claims.jti && this.withinGrace(family, claims.jti)) {
      // Two tabs refreshed with the same token: the later one gets the pair the earlier one was given (same
      // refresh jti, a fresh access token) and the family stays as the first rotation left it.
      await this.putFamily(claims.lid, family);
      const user = await this.users.findById(claims.sub);
      if (!user) throw new PlatformError('UNAUTHORIZED', 'The token names no existing user');
      return { bundle: this.mint(user, claims.provider ?? 'refresh', claims.lid, family.current).bundle, user };
    }
    if (family.current !== claims.jti) {
      // Reuse of a rotated token: whoever holds the newer one may be the thief. The family stays taken.
      await this.sessions.revokeLogin(claims.lid);
      throw new PlatformError('UNAUTHORIZED', 'Refresh token already used: the login was ended');
    }
    const user = await this.users.findById(claims.sub);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'The token names no existing user');
    const { bundle, refreshJti } = this.mint(user, claims.provider ?? 'refresh', claims.lid);
    await this.putFamily(claims.lid, {
      user_id: user.id,
      current: refreshJti,
      previous: claims.jti,
      rotated_at: Date.now(),
    });
    await this.revocations.revoke('token', claims.jti, claims.exp);
    return { bundle, user };
  }

  /** A live access token's principal (signature, expiry, type, revocation of it or its login), or UNAUTHORIZED. */
  async verifyAccess(token: string): Promise<Principal> {
    const principal = this.verifier.verify(token);
    await assertTokenLive(this.revocations, principal);
    return principal;
  }

  /**
   * Logout with one token (access or refresh): only a genuine token of ours counts (signature checked; an
   * expired one needs nothing). The token and its whole login end: access tokens, refresh family, cookies.
   * Returns whether something was revoked.
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
    const loginId = typeof claims.lid === 'string' && claims.lid ? claims.lid : undefined;
    await this.endLogin(loginIdOf({ loginId, tokenId: claims.jti }));
    return true;
  }

  /** Ends a login (logout by its cookie or one of its tokens): its refresh family, access tokens and cookies. */
  async endLogin(loginId: string | undefined): Promise<void> {
    if (!loginId) return;
    await this.store.delete(familyKey(loginId));
    await this.sessions.revokeLogin(loginId);
  }

  /**
   * Takes the login's family (of two concurrent refreshes exactly one gets it). While the other one holds it
   * (a few milliseconds between take and put) the family is briefly absent: wait for it rather than call a
   * concurrent refresh by a tab of the same browser a reuse. Null once the login ended or the family expired.
   */
  private async takeFamily(loginId: string): Promise<RefreshFamily | null> {
    for (let attempt = 0; ; attempt += 1) {
      if (await this.revocations.isRevoked('login', loginId)) return null;
      const raw = await this.store.take(familyKey(loginId));
      if (raw) return JSON.parse(raw) as RefreshFamily;
      if (attempt >= FAMILY_WAIT_ATTEMPTS || this.options.refreshReuseGraceSeconds === 0) return null;
      await new Promise((resolve) => setTimeout(resolve, FAMILY_WAIT_MS));
    }
  }

  /** Whether `jti` is the refresh token rotated away less than REFRESH_REUSE_GRACE_SECONDS ago. */
  private withinGrace(family: RefreshFamily, jti: string): boolean {
    return (
      family.previous === jti &&
      this.options.refreshReuseGraceSeconds > 0 &&
      Date.now() - family.rotated_at <= this.options.refreshReuseGraceSeconds * 1000
    );
  }

  private mint(
    user: UserEntity,
    provider: string,
    loginId: string,
    refreshJti: string = randomUUID(),
  ): { bundle: TokenBundle; refreshJti: string } {
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
        lid: loginId,
      },
      { secret: this.secret, algorithm: 'HS256', expiresIn: this.options.accessTokenTtlSeconds },
    );
    const refresh = this.jwt.sign(
      { sub: user.id, provider, type: 'refresh', jti: refreshJti, lid: loginId },
      { secret: this.secret, algorithm: 'HS256', expiresIn: this.options.refreshTokenTtlSeconds },
    );
    return {
      bundle: {
        access_token: access,
        refresh_token: refresh,
        expires_in: this.options.accessTokenTtlSeconds,
        token_type: 'Bearer',
      },
      refreshJti,
    };
  }

  private async putFamily(loginId: string, family: RefreshFamily): Promise<void> {
    await this.store.put(familyKey(loginId), JSON.stringify(family), this.options.refreshTokenTtlSeconds * 1000);
  }

  /** Refresh tokens issued before logins were tracked: single use by their own `refresh:<jti>` entry; the next bundle starts a login. */
  private async refreshUntracked(claims: {
    sub: string;
    jti: string;
    exp: number;
    provider?: string;
  }): Promise<{ bundle: TokenBundle; user: UserEntity }> {
    const owner = await this.store.take(refreshKey(claims.jti));
    if (owner === null || owner !== claims.sub)
      throw new PlatformError('UNAUTHORIZED', 'Refresh token already used or revoked');
    await this.revocations.revoke('token', claims.jti, claims.exp);
    const user = await this.users.findById(claims.sub);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'The token names no existing user');
    const { login_id: _loginId, ...bundle } = await this.issue(user, claims.provider ?? 'refresh');
    return { bundle, user };
  }

  private decode(
    token: string,
    type: 'refresh',
  ): { sub: string; jti: string; exp: number; provider?: string; lid?: string } {
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
      ...(typeof claims.lid === 'string' && claims.lid ? { lid: claims.lid } : {}),
    };
  }
}

/** How long a refresh waits for a family another refresh holds: 20 × 25 ms. */
const FAMILY_WAIT_ATTEMPTS = 20;
const FAMILY_WAIT_MS = 25;

function refreshKey(jti: string): string {
  return `refresh:${jti}`;
}

function familyKey(loginId: string): string {
  return `refresh-family:${loginId.slice(0, 64)}`;
}
