import type { IncomingHttpHeaders } from 'node:http';
import { ACCESS_LEVEL, hasAccessLevel } from '../../auth/access-level.js';
import { hasPermission, isPermission, PERMISSIONS, type Permission } from '../../auth/permissions.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import type { Caller } from '../app-core/index.js';

/** What an MCP caller presented: the key's name and permissions (`--no-auth`: an anonymous admin of this machine). */
export interface McpPrincipal {
  keyName: string;
  permissions: Permission[];
}

/** `--no-auth`: the one caller is the operator of a localhost server. */
export const NO_AUTH_PRINCIPAL: McpPrincipal = Object.freeze({ keyName: '-', permissions: [...PERMISSIONS] });

/**
 * What an MCP request needs beyond a valid key, the same on both doors: the REST routes declare it with
 * `@RequirePermission`, the JSON-RPC handlers of `/mcp` (and stdio) check it with assertMethodPermission.
 * Tools are filtered one by one instead (permissionForTool).
 */
export const METHOD_PERMISSIONS = {
  'resources/list': 'read',
  'resources/read': 'read',
} as const satisfies Record<string, Permission>;

export type GuardedMethod = keyof typeof METHOD_PERMISSIONS;

/** FORBIDDEN naming the permission, as the REST door's guard says it. */
export function assertMethodPermission(principal: McpPrincipal, method: GuardedMethod): void {
  const needed = METHOD_PERMISSIONS[method];
  if (!hasPermission(principal.permissions, needed))
    throw new PlatformError(
      'FORBIDDEN',
      `Permission "${needed}" required (this credential has: ${principal.permissions.join(', ') || 'none'})`,
    );
}

/** The caller of an MCP request, from the principal the mcp-key strategy verified. */
export function mcpPrincipalOf(request: AuthenticatedRequest): McpPrincipal {
  const principal = request.principal;
  if (!principal || principal.strategy !== 'mcp-key')
    throw new PlatformError('UNAUTHORIZED', 'An MCP API key is required (Authorization: Bearer or X-API-Key)');
  return { keyName: principal.subject, permissions: principal.permissions.filter(isPermission) };
}

/** The key from `X-API-Key` or `Authorization: Bearer …`. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

/**
 * The permission a tool needs, by name prefix: `python…` execute, `docs_writer…` write,
 * `admin…` admin, everything else read. A prefix, not "contains" as the original checked.
 */
export function permissionForTool(name: string): Permission {
  if (name.startsWith('python')) return 'execute';
  if (name.startsWith('docs_writer')) return 'write';
  if (name.startsWith('admin')) return 'admin';
  return 'read';
}

/**
 * Whether `principal` may see and call a tool: its name's permission, and for an application-core function
 * its own level (a `level: -1` function is an admin tool).
 */
export function mayUseTool(principal: McpPrincipal, tool: { name: string; level?: number }): boolean {
  if (!hasPermission(principal.permissions, permissionForTool(tool.name))) return false;
  return tool.level === undefined || hasAccessLevel(callerFor(principal).level, tool.level);
}

/** The app core's caller for a key: admin keys run at the admin level, every other key as a logged-in user. */
export function callerFor(principal: McpPrincipal): Caller {
  return {
    level: principal.permissions.includes('admin') ? ACCESS_LEVEL.ADMIN : ACCESS_LEVEL.LOGGED_IN,
    userId: `mcp:${principal.keyName}`,
    transport: 'mcp',
  };
}

/** MCP's tool-name rule (1–128 of `A-Za-z0-9_-.`): `{module}_{function}` with every other character as `_`. */
export function toolNameFor(module: string, fn: string): string {
  return `${module}_${fn}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128);
}
