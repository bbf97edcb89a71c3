/** Platform access levels (seed 02): -1 ranks highest. */
export const ACCESS_LEVEL = { ADMIN: -1, NOT_LOGGED_IN: 0, LOGGED_IN: 1, TRUSTED: 2 } as const;

/** Who the verified token says the caller is. */
export interface Principal {
  platformUserId: string;
  username: string;
  email: string | null;
  level: number | null;
  tokenSaysAdmin: boolean;
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

/** Implemented by a service that keeps its own user records (the registry); optional elsewhere. */
export const USER_RESOLVER = Symbol('USER_RESOLVER');

export interface UserResolver {
  resolve(principal: Principal): Promise<CallerUser>;
}
