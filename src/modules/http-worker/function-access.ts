import { ACCESS_LEVEL, accessLevelName, hasAccessLevel } from '../../auth/access-level.js';

/** What the worker decides before running a function for a caller. */
export type AccessDecision = { allowed: true } | { allowed: false; status: 401 | 403; message: string };

export interface AccessQuestion {
  module: string;
  functionName: string;
  /** The function's `level` option. */
  required: number;
  /** The caller's level, or null without a session (no cookie, no token). */
  callerLevel: number | null;
  /** OPEN_MODULES. */
  openModules: readonly string[];
  /** The function ignores credentials (login, refresh, logout): open to anyone. */
  credentialsIgnored?: boolean;
}

/**
 * A function is open when its module is listed in OPEN_MODULES or its name starts with `open`. Logins
 * (`ignoreCredentials`) are open through `credentialsIgnored`.
 */
export function isOpenFunction(module: string, functionName: string, openModules: readonly string[]): boolean {
  return functionName.startsWith('open') || openModules.includes(module);
}

/**
 * Who may call a function over HTTP. An open function needs no session; any other needs one (401 without).
 * The function's `level` always holds, by the non-monotonic rule (`level -1` only for admins, else admin or
 * at least the level): an open function declared above NOT_LOGGED_IN still needs a session of that level.
 * Too low a level is 403; no session where one is needed is 401.
 */
export function decideAccess(question: AccessQuestion): AccessDecision {
  const { module, functionName, required, callerLevel } = question;
  const open = question.credentialsIgnored === true || isOpenFunction(module, functionName, question.openModules);
  const key = `${module}.${functionName}`;
  if (callerLevel === null) {
    if (open && hasAccessLevel(ACCESS_LEVEL.NOT_LOGGED_IN, required)) return { allowed: true };
    return {
      allowed: false,
      status: 401,
      message: `${key} needs a session: log in (tb_session cookie or Bearer token)`,
    };
  }
  if (hasAccessLevel(callerLevel, required)) return { allowed: true };
  return {
    allowed: false,
    status: 403,
    message: `${key} needs access level ${accessLevelName(required)} (${required}); the caller is ${accessLevelName(callerLevel)} (${callerLevel})`,
  };
}
