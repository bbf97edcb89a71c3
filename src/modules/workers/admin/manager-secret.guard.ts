import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { PlatformError } from '../../../common/errors.js';
import type { ManagerProcess } from '../manager-process.js';
import { secretsEqual } from '../manager-secret.js';
import { MANAGER_PROCESS } from './manager-admin.tokens.js';

/**
 * Every admin API request carries the manager secret in `X-Cluster-Secret` (nginx adds it after basic auth):
 * none → 401, a wrong one → 403. Compared in constant time.
 */
@Injectable()
export class ManagerSecretGuard implements CanActivate {
  constructor(@Inject(MANAGER_PROCESS) private readonly manager: ManagerProcess) {}

  canActivate(context: ExecutionContext): boolean {
    const given = context.switchToHttp().getRequest<Request>().header('x-cluster-secret');
    if (!given) throw new PlatformError('UNAUTHORIZED', 'X-Cluster-Secret header required (the manager secret)');
    if (!secretsEqual(given, this.manager.secret)) throw new PlatformError('FORBIDDEN', 'wrong X-Cluster-Secret');
    return true;
  }
}
