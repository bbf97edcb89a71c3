import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_LEVEL } from '../../auth/access-level.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../../auth/principal.js';
import { McpKeysService } from './mcp-keys.service.js';
import { NO_AUTH_PRINCIPAL, presentedKey, type McpPrincipal } from './mcp-permissions.js';
import { MCP_OPTIONS, type McpOptions } from './mcp.options.js';

/**
 * The MCP transport's keys (`tb_mcp_…` in `Authorization: Bearer` or `X-API-Key`, X-API-Key first) under the
 * one AuthGuard, for both doors. A malformed, unknown or revoked key is a 401. Under `--no-auth` (a localhost
 * server for its operator) every request is that operator, with every permission.
 */
@Injectable()
export class McpKeyStrategy implements AuthStrategy {
  readonly name = 'mcp-key' as const;

  constructor(
    private readonly keys: McpKeysService,
    @Inject(MCP_OPTIONS) private readonly options: McpOptions,
  ) {}

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    if (this.options.noAuth) return mcpKeyPrincipal(NO_AUTH_PRINCIPAL);
    const key = presentedKey(request.headers);
    if (!key) return null;
    return mcpKeyPrincipal(await this.keys.verify(key));
  }
}

/** An admin key counts as the admin level (admin implies every permission); any other key as a logged-in user. */
export function mcpKeyPrincipal(key: McpPrincipal): Principal {
  const admin = key.permissions.includes('admin');
  return {
    kind: 'key',
    subject: key.keyName,
    platformUserId: `mcp:${key.keyName}`,
    username: key.keyName,
    email: null,
    level: admin ? ACCESS_LEVEL.ADMIN : ACCESS_LEVEL.LOGGED_IN,
    tokenSaysAdmin: admin,
    permissions: key.permissions,
    strategy: 'mcp-key',
    apiKeyName: key.keyName,
  };
}
