/**
 * Whether a WebSocket handshake's `Origin` may open a connection. A browser applies no CORS to a handshake and sends
 * the user's cookies with it; `SameSite=Lax` on `tb_session` keeps them off handshakes of other sites in current
 * browsers only, not off those of a page of the same site (another subdomain or port) nor in browsers that ignore
 * the attribute. Without this check such a page could open a connection as that user (cross-site WebSocket
 * hijacking). Allowed:
 * - the origins the HTTP workers answer with credentials (`corsRule`: CORS_ORIGINS, Tauri, any-port localhost);
 * - the page's own site: an `Origin` whose host and port are the request's `Host`, as for a page served by the same
 *   proxy (the scheme is not compared: TLS may end at the proxy);
 * - no `Origin` at all: no browser sent it (scripts, apps), so no user's cookies came along uninvited.
 */
export function websocketOriginRule(
  corsRule: (origin: string) => boolean,
): (origin: string | undefined, host: string | undefined) => boolean {
  return (origin, host) => {
    if (origin === undefined) return true;
    if (corsRule(origin)) return true;
    return host !== undefined && hostOfOrigin(origin) === host.toLowerCase();
  };
}

/** `host[:port]` of an http(s) origin as `Host` would name it (default ports left out), else null. */
function hostOfOrigin(origin: string): string | null {
  if (!/^https?:\/\/[^/?#\s@]+$/i.test(origin)) return null;
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}
