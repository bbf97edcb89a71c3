import type { IncomingMessage } from 'node:http';
import { cookieValue } from '../../auth/credentials.js';
import type { CredentialRequest, Principal } from '../../auth/principal.js';

/** The session a connection carries, as handlers see it (the original's WS_CONNECT fields). */
export interface WsSession {
  authenticated: boolean;
  user_id: string | null;
  user_name: string | null;
  session_id: string | null;
  level: number;
}

export const ANONYMOUS_WS_SESSION: WsSession = Object.freeze({
  authenticated: false,
  user_id: null,
  user_name: null,
  session_id: null,
  level: 0,
});

export function wsSessionOf(principal: Principal | null): WsSession {
  if (!principal) return ANONYMOUS_WS_SESSION;
  return {
    authenticated: true,
    user_id: principal.platformUserId,
    user_name: principal.username,
    session_id: principal.sessionId ?? null,
    level: principal.level,
  };
}

/**
 * The credential of an upgrade request as the HTTP strategies read it. Browsers cannot set headers on a
 * WebSocket, so besides the `tb_session` cookie (and `Authorization` for scripts) a `token` query parameter
 * is accepted: a platform JWT (`eyJ…`) becomes a Bearer credential, anything else is taken as the session
 * cookie's value (what the original accepted in `token`/`session_token`).
 */
export function credentialRequestOf(request: IncomingMessage, url: URL, sessionCookieName: string): CredentialRequest {
  const headers: Record<string, string | string[] | undefined> = {
    authorization: request.headers.authorization,
    cookie: request.headers.cookie,
  };
  const token = url.searchParams.get('token') ?? url.searchParams.get('session_token');
  if (token) {
    if (/^eyJ[\w-]*\.[\w-]*\.[\w-]*$/.test(token)) headers.authorization = `Bearer ${token}`;
    else if (!cookieValue({ headers } as CredentialRequest, sessionCookieName))
      headers.cookie = `${sessionCookieName}=${encodeURIComponent(token)}`;
  }
  return { headers } as CredentialRequest;
}
