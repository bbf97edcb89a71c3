import { Injectable } from '@nestjs/common';
import { ACCESS_LEVEL } from '../access-level.js';
import { cookieValue } from '../credentials.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';
import { SessionCookies } from '../session-cookie/session-cookies.js';

/** The workers' signed session cookie (`tb_session`), checked against the logout denylist. */
@Injectable()
export class SessionCookieStrategy implements AuthStrategy {
  readonly name = 'session-cookie' as const;

  constructor(private readonly sessions: SessionCookies) {}

  /** Null at once without the cookie (no promise on the hot path of open routes). */
  authenticate(request: CredentialRequest): Promise<Principal | null> | null {
    const token = cookieValue(request, this.sessions.cookieName);
    if (!token) return null;
    return this.verified(token);
  }

  private async verified(token: string): Promise<Principal> {
    const session = await this.sessions.verify(token);
    return {
      kind: 'user',
      subject: session.user_id,
      platformUserId: session.user_id,
      username: session.user_name,
      email: session.email,
      level: session.level,
      tokenSaysAdmin: session.level === ACCESS_LEVEL.ADMIN,
      permissions: [],
      strategy: this.name,
      sessionId: session.session_id,
      ...(session.login_id ? { loginId: session.login_id } : {}),
      expiresAt: session.exp,
    };
  }
}
