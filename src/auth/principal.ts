import type { Request } from 'express';

export { ACCESS_LEVEL } from './access-level.js';

/**
 * Names of the strategies a service can declare (`AuthModule.forRoot({ strategies })`): the platform's JWT,
 * the workers' session cookie, the gateway's `sk-tb-…` keys (and its admin key), the MCP transport's
 * `tb_mcp_…` keys, and the manager's `X-Cluster-Secret`.
 */
export const AUTH_STRATEGY_NAMES = ['jwt', 'session-cookie', 'gateway-key', 'mcp-key', 'cluster-secret'] as const;
export type AuthStrategyName = (typeof AUTH_STRATEGY_NAMES)[number];

/** What kind of caller a credential stands for: a person (token, cookie), a key, or another service. */
export type PrincipalKind = 'user' | 'key' | 'service';

/** Who a verified credential says the caller is: the one shape every strategy of every service yields. */
export interface Principal {
  kind: PrincipalKind;
  /**
   * Whom the credential names: the platform user id (JWT `user_id`/`sub`, a session's user), the gateway key's
   * user, the MCP key's name, or the service (`cluster`, the gateway's `admin` key).
   */
  subject: string;
  /** The platform's user id where the credential names a user (else the subject). */
  platformUserId: string;
  username: string;
  email: string | null;
  /** Access level -1/0/1/2 (ACCESS_LEVEL); a level the credential does not state counts as LOGGED_IN. */
  level: number;
  tokenSaysAdmin: boolean;
  /** What a key may do (read, write, execute, admin); empty for other credentials. */
  permissions: readonly string[];
  /** The gateway's billing tier of the key's user (`payg`, `sub`, `admin`). */
  tier?: string;
  /** The strategy that verified the credential. */
  strategy: AuthStrategyName;
  /** JWTs: the token's `jti` (revocation) and `provider` claim, when it has them. */
  tokenId?: string;
  provider?: string;
  /**
   * The sign-in this credential comes from (JWT `lid` claim, a session's `login_id`): the access tokens, the
   * refresh-token family and the cookies of one login share it, so a logout ends them together.
   */
  loginId?: string;
  /** Session cookies: the session's id, and for sessions and JWTs the expiry (epoch seconds), for logout. */
  sessionId?: string;
  expiresAt?: number;
  /** Keys: the key's id (gateway) and name (MCP). */
  apiKeyId?: string;
  apiKeyName?: string;
}

/** The service's own record of the caller, resolved from the principal (the registry's user row). */
export interface CallerUser {
  id: string;
  platformUserId: string;
  username: string;
  email: string | null;
  isAdmin: boolean;
}

export interface AuthenticatedRequest {
  principal?: Principal;
  user?: CallerUser;
  ip?: string;
}

/** What a strategy reads: headers only (Express lower-cases their names). */
export type CredentialRequest = Pick<Request, 'headers'>;

/**
 * One way of proving who the caller is. `authenticate` returns null when the request carries none of
 * this strategy's credential, and throws PlatformError('UNAUTHORIZED') when it carries one that is bad
 * (never treat a bad credential as anonymous). It may answer null synchronously when the credential is absent
 * (most requests to an open route carry none: no promise for them), and answers through a Promise otherwise.
 */
export interface AuthStrategy {
  readonly name: AuthStrategyName;
  authenticate(request: CredentialRequest): Principal | null | Promise<Principal | null>;
}

/** Implemented by a service that keeps its own user records (the registry); optional elsewhere. */
export const USER_RESOLVER = Symbol('USER_RESOLVER');

export interface UserResolver {
  resolve(principal: Principal): Promise<CallerUser>;
}
