import { Injectable } from '@nestjs/common';
import type { CallerResolver } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest, Principal } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import type { GatewayTier } from './entities/gateway-user.entity.js';

/** Who called the gateway: the admin key (no user), or a user's key. */
export interface GatewayCaller {
  admin: boolean;
  userId: string | null;
  keyId: string | null;
  email: string | null;
  tier: GatewayTier;
}

export const ADMIN_CALLER: GatewayCaller = { admin: true, userId: null, keyId: null, email: null, tier: 'admin' };

/** The gateway's view of a principal its gateway-key strategy verified. */
export function gatewayCallerOf(principal: Principal | undefined): GatewayCaller | null {
  if (!principal || principal.strategy !== 'gateway-key') return null;
  if (!principal.apiKeyId) return ADMIN_CALLER;
  return {
    admin: principal.tier === 'admin',
    userId: principal.subject,
    keyId: principal.apiKeyId,
    email: principal.email,
    tier: (principal.tier ?? 'payg') as GatewayTier,
  };
}

/** `@CurrentCaller() caller: GatewayCaller` in the gateway's controllers (routes that are not public always have one). */
@Injectable()
export class GatewayCallerResolver implements CallerResolver<GatewayCaller> {
  async of(request: AuthenticatedRequest): Promise<GatewayCaller> {
    const caller = gatewayCallerOf(request.principal);
    if (!caller) throw new PlatformError('UNAUTHORIZED', 'An API key is required');
    return caller;
  }
}
