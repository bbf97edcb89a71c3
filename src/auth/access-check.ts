import { PlatformError } from '../common/errors.js';
import { ACCESS_LEVEL, accessLevelName, hasAccessLevel } from './access-level.js';
import type { AccessRule } from './access.decorators.js';
import { hasPermission } from './permissions.js';
import type { AuthModuleOptions } from './auth.options.js';
import type { AuthenticatedRequest, AuthStrategyName } from './principal.js';

const HOW_TO_SEND: Record<AuthStrategyName, string> = {
  jwt: 'Authorization: Bearer <token>',
  'session-cookie': 'the session cookie',
  'gateway-key': 'Authorization: Bearer sk-tb-… (or X-API-Key)',
  'mcp-key': 'Authorization: Bearer tb_mcp_… (or X-API-Key)',
  'cluster-secret': 'X-Cluster-Secret: <the manager secret>',
};

export function isAdmin(request: AuthenticatedRequest): boolean {
  return Boolean(request.user?.isAdmin ?? request.principal?.tokenSaysAdmin);
}

/** The caller's level: ADMIN when the service's own records make them one, else what the credential says. */
export function effectiveLevel(request: AuthenticatedRequest): number {
  if (!request.principal) return ACCESS_LEVEL.NOT_LOGGED_IN;
  return isAdmin(request) ? ACCESS_LEVEL.ADMIN : request.principal.level;
}

/**
 * Whether an identified (or anonymous) caller meets a route's rule: 401 when a credential is needed and
 * none was sent, 403 naming the need when the credential falls short.
 */
export function assertAccess(
  rule: AccessRule,
  request: AuthenticatedRequest,
  strategies: readonly AuthStrategyName[],
  messages: AuthModuleOptions['messages'] = {},
): void {
  const principal = request.principal;
  if (!principal) {
    if (rule.public) return;
    throw new PlatformError(
      'UNAUTHORIZED',
      messages.credentialRequired ??
        `Authentication required: send ${strategies.map((name) => HOW_TO_SEND[name]).join(' or ')}`,
    );
  }
  if (rule.admin && !isAdmin(request)) throw new PlatformError('FORBIDDEN', messages.adminRequired ?? 'Admin required');
  if (rule.permission && !isAdmin(request) && !hasPermission(principal.permissions, rule.permission)) {
    throw new PlatformError(
      'FORBIDDEN',
      `Permission "${rule.permission}" required (this credential has: ${principal.permissions.join(', ') || 'none'})`,
    );
  }
  if (rule.level !== undefined && !hasAccessLevel(effectiveLevel(request), rule.level)) {
    throw new PlatformError(
      'FORBIDDEN',
      `Access level ${accessLevelName(rule.level)} (${rule.level}) required; the caller is ${accessLevelName(effectiveLevel(request))} (${effectiveLevel(request)})`,
    );
  }
}
