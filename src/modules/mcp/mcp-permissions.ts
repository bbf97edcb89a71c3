import { ACCESS_LEVEL, hasAccessLevel } from '../../auth/access-level.js';
import { hasPermission, type Permission } from '../../auth/permissions.js';
import type { Caller } from '../app-core/index.js';

/** What an MCP caller presented: the key's name and permissions (`--no-auth`: an anonymous admin of this machine). */
export interface McpPrincipal {
  keyName: string;
  permissions: Permission[];
}

/**
 * The permission a tool needs, by name prefix (seed 02 A): `python…` execute, `docs_writer…` write,
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
