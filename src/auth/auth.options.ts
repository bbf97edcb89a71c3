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
  /**
   * The credentials the service takes. Every one of them is checked on each request: a credential that is
   * present but bad is a 401 whatever else comes with it; of the good ones, the first in this order decides.
   */
  strategies: AuthStrategyName[];
  sessionCookie?: SessionCookieOptions;
  /** `cluster-secret`: the secret `X-Cluster-Secret` must carry (read per request: the manager loads it at start). */
  clusterSecret?: () => string | null;
  /** Refusal texts a service's clients have always read (the gateway's OpenAI-style wording). */
  messages?: { credentialRequired?: string; adminRequired?: string };
}

export const AUTH_OPTIONS = Symbol('AUTH_OPTIONS');

/**
 * The injection token of a strategy. The platform's own (jwt, session-cookie, cluster-secret) are provided by
 * AuthModule; a product's (gateway-key, mcp-key) by the product's module, which owns the keys.
 */
export function authStrategyToken(name: AuthStrategyName): string {
  return `auth-strategy:${name}`;
}
