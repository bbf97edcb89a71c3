import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
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

export type GatewayRequest = Request & { gatewayCaller?: GatewayCaller };

/** The caller the guard verified (routes that are not public always have one). */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): GatewayCaller => {
  const caller = context.switchToHttp().getRequest<GatewayRequest>().gatewayCaller;
  if (!caller) throw new PlatformError('UNAUTHORIZED', 'An API key is required');
  return caller;
});
