import { Injectable } from '@nestjs/common';
import { ACCESS_LEVEL } from '../access-level.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { API_KEY_PREFIX, bearerToken, headerValue } from '../credentials.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';

/**
 * API keys with permissions (MCP transport, model gateway). Seed 02 and the original MCP server accept
 * `X-API-Key: <key>` or `Authorization: Bearer <key>` (the OpenAI SDKs the gateway serves can only send
 * the latter); `X-API-Key` wins when both are sent. A bearer value without the key prefix is a JWT.
 */
@Injectable()
export class ApiKeyStrategy implements AuthStrategy {
  readonly name = 'api-key' as const;

  constructor(private readonly keys: ApiKeysService) {}

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const key = headerValue(request, 'x-api-key')?.trim() || this.bearerKey(request);
    if (!key) return null;
    const info = await this.keys.verify(key);
    return {
      platformUserId: info.owner,
      username: info.owner,
      email: null,
      level: info.level,
      tokenSaysAdmin: info.level === ACCESS_LEVEL.ADMIN,
      permissions: info.permissions,
      strategy: this.name,
      apiKeyId: info.id,
      apiKeyName: info.name,
    };
  }

  private bearerKey(request: CredentialRequest): string | null {
    const header = request.headers.authorization;
    if (!header || !/^Bearer\s/i.test(header)) return null;
    const token = bearerToken(header);
    return token?.startsWith(API_KEY_PREFIX) ? token : null;
  }
}
