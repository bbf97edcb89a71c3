import type { TokenBundle } from './tokens.service.js';

/** What the token-bridge page hands to the web client after a login (OAuth callback, magic link). */
export interface BridgeLogin {
  bundle: TokenBundle;
  user: { id: string; username: string; email: string; level: number };
  /** Where the web client lives: an allowed origin, or null for this worker's own origin. */
  redirectAfter: string | null;
}

/** Text for an HTML text node or attribute. */
export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/** JSON that is safe inside an inline <script>: no `<`, `>`, `&` or line separators can end the script. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function page(title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}</style></head>
<body>${body}${script ? `<script>${script}</script>` : ''}</body></html>
`;
}

/**
 * The original's token bridge: stores the session in localStorage `tbjs_user_session` and continues to
 * `<redirect_after>/web/assets/login.html#token=…&refresh_token=…&user_id=…&username=…`. The tokens travel in
 * the URL fragment, never the query: a browser sends neither the fragment to the server (access logs, proxies)
 * nor in `Referer`. A web client on this origin finds the session in localStorage already; one on another
 * origin reads `location.hash` (the original read `location.search`). Every value is embedded as script-safe
 * JSON (the original's page could be broken out of by a username).
 */
export function tokenBridgePage(login: BridgeLogin): string {
  const session = {
    isAuthenticated: true,
    token: login.bundle.access_token,
    refreshToken: login.bundle.refresh_token,
    userId: login.user.id,
    username: login.user.username,
    email: login.user.email,
    userLevel: login.user.level,
  };
  const query = new URLSearchParams({
    token: login.bundle.access_token,
    refresh_token: login.bundle.refresh_token,
    user_id: login.user.id,
    username: login.user.username,
  });
  const target = `${login.redirectAfter ?? ''}/web/assets/login.html#${query.toString()}`;
  const script = `(function(){var s=${scriptJson(session)};try{localStorage.setItem('tbjs_user_session',JSON.stringify(s));}catch(e){}
setTimeout(function(){window.location.replace(${scriptJson(target)});},500);})();`;
  return page(
    'Signed in',
    `<h1>Signed in</h1><p>Welcome, ${escapeHtml(login.user.username)}. Continuing to the app…</p>
<p><a href="${escapeHtml(target)}">Continue to the app</a></p>`,
    script,
  );
}

/** The bridge's error page: shows the message and returns to the login page after 2 s. */
export function tokenBridgeErrorPage(message: string, redirectAfter: string | null = null): string {
  const target = `${redirectAfter ?? ''}/web/assets/login.html?${new URLSearchParams({ error: message }).toString()}`;
  return page(
    'Sign-in failed',
    `<h1>Sign-in failed</h1><p>Error: ${escapeHtml(message)}</p><p><a href="${escapeHtml(target)}">Back to sign-in</a></p>`,
    `setTimeout(function(){window.location.replace(${scriptJson(target)});},2000);`,
  );
}

/** GET /auth/magic/verify: a page whose button POSTs the token; loading the link alone consumes nothing. */
export function magicLinkConfirmPage(token: string, valid: boolean, polled = false): string {
  if (!valid)
    return page(
      'Link expired',
      '<h1>This sign-in link has expired or was already used</h1><p>Request a new link from the sign-in page.</p>',
    );
  if (polled)
    return page(
      'Confirm sign-in',
      `<h1>Sign in another device</h1><p>This link signs in the app that asked for it (a command-line or desktop
app), not this browser. Enter the code that app shows. If you did not ask to sign in, close this page.</p>
<form method="post" action="/auth/magic/verify"><input type="hidden" name="token" value="${escapeHtml(token)}">
<label>Code <input name="confirm_code" autocomplete="off" autocapitalize="characters" maxlength="12" required></label>
<button type="submit">Sign in the app</button></form>`,
    );
  return page(
    'Confirm sign-in',
    `<h1>Sign in to Toolbox</h1><p>Press the button to finish signing in on this device.</p>
<form method="post" action="/auth/magic/verify"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Sign in</button></form>`,
  );
}

/** After the code of a polled link matched: the app that asked is signed in at its next poll. */
export function magicLinkApprovedPage(): string {
  return page(
    'Signed in',
    '<h1>The app is signed in</h1><p>Return to the app that asked; it continues by itself. You can close this page.</p>',
  );
}
