import type { AuthStrategyName } from './principal.js';

export interface SessionCookieOptions {
  /** Cookie name; default `tb_session` (the original workers' name). */
  name?: string;
  /** Lifetime of a session, in the signed payload and the cookie's Max-Age; default 7 days. */
  maxAgeSeconds?: number;
  /** `Secure` attribute; default true (set false only for plain-HTTP development). */
  secure?: boolean;
  /** Signing secret; default the platform secret (PLATFORM_JWT_SECRET), from which a cookie-only key is derived. */
  secret?: string;
}

/** How one service authenticates its callers: `AuthModule.forRoot(options)`. */
export interface AuthModuleOptions {
  /** Tried in this order; the first that finds its credential decides (a bad credential is a 401). */
  strategies: AuthStrategyName[];
  sessionCookie?: SessionCookieOptions;
}

export const AUTH_OPTIONS = Symbol('AUTH_OPTIONS');
export const AUTH_STRATEGIES = Symbol('AUTH_STRATEGIES');
