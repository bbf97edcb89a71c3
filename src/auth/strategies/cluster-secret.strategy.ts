import { Inject, Injectable } from '@nestjs/common';
import { PERMISSIONS } from '../permissions.js';
import { PlatformError } from '../../common/errors.js';
import { ACCESS_LEVEL } from '../access-level.js';
import { AUTH_OPTIONS, type AuthModuleOptions } from '../auth.options.js';
import { headerValue } from '../credentials.js';
import { secretsEqual } from '../secrets.js';
import type { AuthStrategy, CredentialRequest, Principal } from '../principal.js';

/**
 * The worker manager's `X-Cluster-Secret` (nginx adds it after basic auth; cluster nodes send it to each
 * other). Compared in constant time, both sides hashed first so their lengths leak nothing. A wrong secret is
 * a 403, not a 401: the manager's clients have always told "no secret" (401) from "wrong secret" (403).
 */
@Injectable()
export class ClusterSecretStrategy implements AuthStrategy {
  readonly name = 'cluster-secret' as const;

  constructor(@Inject(AUTH_OPTIONS) private readonly options: AuthModuleOptions) {}

  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    const given = headerValue(request, 'x-cluster-secret');
    if (!given) return null;
    const expected = this.options.clusterSecret?.() ?? null;
    if (!expected || !secretsEqual(given, expected)) throw new PlatformError('FORBIDDEN', 'wrong X-Cluster-Secret');
    return {
      kind: 'service',
      subject: 'cluster',
      platformUserId: 'cluster',
      username: 'cluster',
      email: null,
      level: ACCESS_LEVEL.ADMIN,
      tokenSaysAdmin: true,
      permissions: [...PERMISSIONS],
      strategy: this.name,
    };
  }
}
