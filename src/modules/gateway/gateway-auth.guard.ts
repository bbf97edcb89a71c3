import { createHash } from 'node:crypto';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ACCESS_METADATA, type AccessRule } from '../../auth/access.decorators.js';
import { bearerToken } from '../../auth/credentials.js';
import { PlatformError } from '../../common/errors.js';
import { GatewayAccountsService } from './accounts/gateway-accounts.service.js';
import { ADMIN_CALLER, type GatewayCaller, type GatewayRequest } from './gateway-caller.js';
import { GatewaySettingsService } from './gateway-settings.service.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The gateway's global guard. Clients send `Authorization: Bearer sk-…` (the OpenAI SDKs' only way);
 * every route needs a key unless marked `@Public()`, admin routes `@Authenticated({ admin: true })` (the
 * platform's decorators, so OpenAPI documents the need the same way). A bad key is a 401, also on public
 * routes.
 */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly gateway: GatewaySettingsService,
    private readonly accounts: GatewayAccountsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule =
      this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
        context.getHandler(),
        context.getClass(),
      ]) ?? {};
    const request = context.switchToHttp().getRequest<GatewayRequest>();
    const key = this.keyOf(request);
    if (key) request.gatewayCaller = await this.verify(key);
    if (rule.public) return true;
    if (!request.gatewayCaller) {
      throw new PlatformError(
        'UNAUTHORIZED',
        "You didn't provide an API key. Send it as 'Authorization: Bearer sk-…' (the SDK's api_key).",
      );
    }
    if (rule.admin && !request.gatewayCaller.admin)
      throw new PlatformError('FORBIDDEN', 'This route needs the admin key');
    return true;
  }

  private keyOf(request: Request): string | null {
    const header = request.headers.authorization;
    if (header) return bearerToken(header);
    const apiKey = request.headers['x-api-key'];
    return typeof apiKey === 'string' && apiKey.trim() ? apiKey.trim() : null;
  }

  private async verify(key: string): Promise<GatewayCaller> {
    const hashed = digest(key);
    if (this.gateway.isAdminKey(hashed)) return ADMIN_CALLER;
    const owner = await this.accounts.verifyKey(key, hashed.toString('hex'));
    return {
      admin: owner.tier === 'admin',
      userId: owner.userId,
      keyId: owner.keyId,
      email: owner.email,
      tier: owner.tier,
    };
  }
}
