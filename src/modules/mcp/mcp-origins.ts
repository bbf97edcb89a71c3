const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** Whether a host name (without port) is a loopback name. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase());
}

/**
 * Which browser origins may call the MCP transport. A browser sends `Origin` with every cross-origin request, and
 * it is the only sign that a tool call comes from a foreign web page the operator merely has open: with `--no-auth`
 * nothing else stands in that page's way. Allowed are http(s) pages on a loopback name, any port (the MCP
 * Inspector, local tools), and the origins listed in MCP_CORS_ORIGINS, where `*` stands for every origin. `null`
 * is never allowed, whatever the list says: sandboxed iframes, `data:` and `file:` pages and redirected requests
 * send it, so any page can produce it at will.
 */
export function mcpOriginRule(configured: readonly string[]): (origin: string) => boolean {
  const anyOrigin = configured.includes('*');
  const listed = new Set(configured.map((origin) => origin.toLowerCase()));
  return (origin) => {
    if (origin.trim().toLowerCase() === 'null') return false;
    if (anyOrigin || listed.has(origin.toLowerCase())) return true;
    const url = parsedOrigin(origin);
    return url !== null && isLoopbackHost(url.hostname);
  };
}

/** An `Origin` value as a URL when it is an http(s) origin (scheme, host, optional port, nothing else). */
function parsedOrigin(origin: string): URL | null {
  if (!/^https?:\/\/[^/?#\s]+$/i.test(origin)) return null;
  try {
    return new URL(origin);
  } catch {
    return null;
  }
}
