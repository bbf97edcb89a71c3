import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PlatformError } from '../../common/errors.js';
import { INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig } from '../../config/config.js';
import { AUTH_OPTIONS, type AuthModuleOptions } from '../auth.options.js';
import { Revocations } from '../shared-store/revocations.js';
import type { Principal } from '../principal.js';
import { SessionToken, type SessionPayload } from './session-token.js';

const DEFAULT_MAX_AGE_SECONDS = 7 * 24 * 3600;

export interface IssuedSession {
  sessionId: string;
  token: string;
  expiresAt: number;
  /** The `Set-Cookie` header value to send. */
  setCookie: string;
}

/**
 * Worker sessions in a signed cookie: issues them (login), verifies them, and ends them (logout) through
 * the shared revocation store (Redis when configured, else the database), so a logout on one worker holds on
 * every other. A revocation lives exactly as long as the session it ends would have.
 */
@Injectable()
export class SessionCookies {
  readonly cookieName: string;
  private readonly maxAgeSeconds: number;
  /** Whether cookies carry `Secure` (also for the other short-lived cookies a service sets, e.g. OAuth state). */
  readonly secure: boolean;
  private readonly token: SessionToken;

  constructor(
    @Inject(AUTH_OPTIONS) options: AuthModuleOptions,
    @Inject(INFRASTRUCTURE_CONFIG) config: InfrastructureConfig,
    private readonly revocations: Revocations,
  ) {
    const cookie = options.sessionCookie ?? {};
    this.cookieName = cookie.name ?? 'tb_session';
    this.maxAgeSeconds = cookie.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
    this.secure = cookie.secure ?? true;
    const secret = cookie.secret ?? config.jwtSecret;
    // The services that issue sessions (the workers) require PLATFORM_JWT_SECRET in their configuration.
    if (!secret) throw new Error('Session cookies need a secret: set PLATFORM_JWT_SECRET (or sessionCookie.secret)');
    this.token = new SessionToken(secret);
  }

  issue(
    user: { userId: string; username: string; level: number; email?: string | null; loginId?: string },
    nowSeconds = Date.now() / 1000,
  ): IssuedSession {
    const payload: SessionPayload = {
      user_id: user.userId,
      session_id: randomUUID(),
      user_name: user.username,
      level: user.level,
      email: user.email ?? null,
      ...(user.loginId ? { login_id: user.loginId } : {}),
      // To the millisecond (the original's floats): a session is ordered exactly against a level change.
      iat: Math.round(nowSeconds * 1000) / 1000,
      exp: Math.floor(nowSeconds) + this.maxAgeSeconds,
    };
    const token = this.token.sign(payload);
    return {
      sessionId: payload.session_id,
      token,
      expiresAt: payload.exp,
      setCookie: this.cookie(token, this.maxAgeSeconds),
    };
  }

  /** The session's payload; UNAUTHORIZED when tampered with, expired or logged out. */
  async verify(token: string): Promise<SessionPayload> {
    const payload = this.token.verify(token);
    if (await this.isRevoked(payload.session_id))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: session ended (logged out)');
    // A cookie belongs to the login it was issued for: ending the login (logout with its token, refresh-token
    // reuse) ends every cookie of it.
    if (payload.login_id && (await this.revocations.isRevoked('login', payload.login_id)))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: session ended (logged out)');
    // A level change ends the user's older sessions: the level in a cookie never outlives a demotion.
    if (await this.revocations.isUserSessionRevoked(payload.user_id, payload.iat))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: session ended (account changed)');
    return payload;
  }

  /** Logout: the session is refused everywhere until it would have expired anyway. */
  async revoke(session: Pick<Principal, 'sessionId' | 'expiresAt'>, nowMs = Date.now()): Promise<void> {
    if (!session.sessionId || !session.expiresAt) return;
    await this.revocations.revoke('session', session.sessionId, session.expiresAt, nowMs);
  }

  /**
   * Ends a whole login: its access tokens, its refresh-token family and every cookie issued for it, until the
   * longest-lived of them would have expired anyway (a cookie's lifetime; refresh tokens also lose their family).
   */
  async revokeLogin(loginId: string | undefined, nowMs = Date.now()): Promise<void> {
    if (!loginId) return;
    await this.revocations.revoke('login', loginId, Math.ceil(nowMs / 1000) + this.maxAgeSeconds, nowMs);
  }

  /** Ends every session of the user issued before now (their level changed). */
  async revokeUser(userId: string): Promise<void> {
    await this.revocations.revokeUserSessions(userId, this.maxAgeSeconds);
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    return this.revocations.isRevoked('session', sessionId);
  }

  /** The `Set-Cookie` value that removes the cookie from the browser (sent with logout). */
  clearCookie(): string {
    return this.cookie('', 0);
  }

  private cookie(value: string, maxAgeSeconds: number): string {
    return [
      `${this.cookieName}=${encodeURIComponent(value)}`,
      `Max-Age=${maxAgeSeconds}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure ? ['Secure'] : []),
    ].join('; ');
  }
}
