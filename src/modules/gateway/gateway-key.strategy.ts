import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ACCESS_LEVEL } from '../../auth/access-level.js';
import { bearerToken, headerValue } from '../../auth/credentials.js';
import { PERMISSIONS } from '../../auth/permissions.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../../auth/principal.js';
import { GatewayAccountsService } from './accounts/gateway-accounts.service.js';
import { GatewaySettingsService } from './gateway-settings.service.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The gateway's keys under the one AuthGuard: `Authorization: Bearer sk-tb-…` (the OpenAI SDKs' only way; it
 * wins over `X-API-Key`), a user's key or the admin key of the gateway's settings. A user key names its user
 * and tier; an admin-tier user's key and the admin key are admins. Unknown and revoked keys are 401, a
 * deactivated account's key 403 (GatewayAccountsService.verifyKey).
 */
@Injectable()
export class GatewayKeyStrategy implements AuthStrategy {
  readonly name = 'gateway-key' as const;
  constructor(
    private readonly gateway: GatewaySettingsService,
    private readonly accounts: GatewayAccountsService,
  ) {}

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const key = this.keyOf(request);
    if (!key) return null;
    const hashed = digest(key);
    if (this.gateway.isAdminKey(hashed)) return gatewayPrincipal({ subject: 'admin', tier: 'admin' });
    const owner = await this.accounts.verifyKey(key, hashed.toString('hex'));
    return gatewayPrincipal({ subject: owner.userId, tier: owner.tier, keyId: owner.keyId, email: owner.email });
  }

  private keyOf(request: CredentialRequest): string | null {
    const header = headerValue(request, 'authorization');
    if (header) return bearerToken(header);
    return headerValue(request, 'x-api-key')?.trim() || null;
  }
}

/** The admin key has no user: its subject is `admin` and it carries no key id. */
function gatewayPrincipal(key: { subject: string; tier: string; keyId?: string; email?: string }): Principal {
  const admin = key.tier === 'admin';
  return {
    kind: key.keyId ? 'key' : 'service',
    subject: key.subject,
    platformUserId: key.subject,
    username: key.subject,
    email: key.email ?? null,
    level: admin ? ACCESS_LEVEL.ADMIN : ACCESS_LEVEL.LOGGED_IN,
    tokenSaysAdmin: admin,
    permissions: admin ? [...PERMISSIONS] : [],
    tier: key.tier,
    strategy: 'gateway-key',
    ...(key.keyId ? { apiKeyId: key.keyId } : {}),
  };
}
