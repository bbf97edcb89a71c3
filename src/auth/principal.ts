import type { Request } from 'express';

export { ACCESS_LEVEL } from './access-level.js';

/** Names of the strategies a service can configure (`AuthModule.forRoot({ strategies })`). */
export type AuthStrategyName = 'jwt' | 'api-key' | 'session-cookie';

/** Who a verified credential says the caller is. */
export interface Principal {
  /** The platform's user id (JWT `user_id`/`sub`, an API key's owner, a session's user). */
  platformUserId: string;
  username: string;
  email: string | null;
  /** Access level -1/0/1/2 (ACCESS_LEVEL); a level the credential does not state counts as LOGGED_IN. */
  level: number;
  tokenSaysAdmin: boolean;
  /** What an API key may do (read, write, execute, admin); empty for other credentials. */
  permissions: readonly string[];
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
  /** API keys: the key's id and name. */
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
 * (never treat a bad credential as anonymous).
 */
export interface AuthStrategy {
  readonly name: AuthStrategyName;
  authenticate(request: CredentialRequest): Promise<Principal | null>;
}

/** Implemented by a service that keeps its own user records (the registry); optional elsewhere. */
export const USER_RESOLVER = Symbol('USER_RESOLVER');

export interface UserResolver {
  resolve(principal: Principal): Promise<CallerUser>;
}
