import { Inject, Injectable, type CanActivate, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { PlatformError } from '../common/errors.js';
import { assertAccess } from './access-check.js';
import { ACCESS_METADATA, type AccessRule } from './access.decorators.js';
import { AUTH_STRATEGIES } from './auth.options.js';
import { presentsCredential } from './credentials.js';
import {
  USER_RESOLVER,
  type AuthenticatedRequest,
  type AuthStrategy,
  type Principal,
  type UserResolver,
} from './principal.js';

export { bearerToken } from './credentials.js';
export { isAdmin } from './access-check.js';

/**
 * Global guard: every route needs a valid credential unless marked @Public(). The service's strategies
 * are tried in order and the first that finds its credential decides; a bad credential is a 401, never
 * silently anonymous, also on public routes (except routes that ignore credentials: signed URLs). A
 * credential header no strategy of this service takes (an API key sent to the registry) is a 401 too.
 */
@Injectable()
export class AuthGuard implements CanActivate, OnModuleInit {
  private users: UserResolver | null = null;

  constructor(
    private readonly reflector: Reflector,
    @Inject(AUTH_STRATEGIES) private readonly strategies: AuthStrategy[],
    private readonly moduleRef: ModuleRef,
  ) {}

  /** A service that keeps user records (the registry) provides USER_RESOLVER somewhere in the app. */
  onModuleInit(): void {
    try {
      this.users = this.moduleRef.get<UserResolver>(USER_RESOLVER, { strict: false });
    } catch {
      this.users = null;
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule =
      this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
        context.getHandler(),
        context.getClass(),
      ]) ?? {};
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    if (rule.ignoreToken) return true;

    const principal = await this.authenticate(request);
    if (principal) {
      request.principal = principal;
      if (this.users) request.user = await this.users.resolve(principal);
    }
    assertAccess(
      rule,
      request,
      this.strategies.map((strategy) => strategy.name),
    );
    return true;
  }

  private async authenticate(request: Request): Promise<Principal | null> {
    for (const strategy of this.strategies) {
      const principal = await strategy.authenticate(request);
      if (principal) return principal;
    }
    if (presentsCredential(request)) {
      throw new PlatformError(
        'UNAUTHORIZED',
        `Authentication failed: this service accepts ${this.strategies.map((strategy) => strategy.name).join(', ')} credentials only`,
      );
    }
    return null;
  }
}
