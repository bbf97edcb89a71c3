import {
  Inject,
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RouteMetadata } from '../common/route-metadata.js';
import { assertAccess } from './access-check.js';
import { ACCESS_METADATA, type AccessRule, type CredentialPolicy } from './access.decorators.js';
import { AUTH_OPTIONS, type AuthModuleOptions } from './auth.options.js';
import { Authenticator } from './authenticator.js';
import { USER_RESOLVER, type AuthenticatedRequest, type Principal, type UserResolver } from './principal.js';

export { bearerToken } from './credentials.js';
export { isAdmin } from './access-check.js';

/** The rule of a route that declares none: any valid credential. */
const NO_RULE: AccessRule = Object.freeze({});

/**
 * The one front door of every service (global guard): the service's Authenticator finds who is calling, then
 * the route's declared rule decides. Every route needs a valid credential unless marked @Public(); a bad
 * credential is a 401, never silently anonymous, also on public routes (except routes that ignore
 * credentials: signed URLs, login routes).
 */
@Injectable()
export class AuthGuard implements CanActivate, OnModuleInit {
  private users: UserResolver | null = null;
  private readonly rules: RouteMetadata<AccessRule>;

  constructor(
    reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly moduleRef: ModuleRef,
    @Inject(AUTH_OPTIONS) private readonly options: AuthModuleOptions,
  ) {
    this.rules = new RouteMetadata<AccessRule>(reflector, ACCESS_METADATA);
  }

  /** A service that keeps user records (the registry) provides USER_RESOLVER somewhere in the app. */
  onModuleInit(): void {
    try {
      this.users = this.moduleRef.get<UserResolver>(USER_RESOLVER, { strict: false });
    } catch {
      this.users = null;
    }
  }

  private readonly policies = new Map<Type<CredentialPolicy>, CredentialPolicy>();

  private policy(type: Type<CredentialPolicy>): CredentialPolicy {
    const known = this.policies.get(type);
    if (known !== undefined) return known;
    const policy = this.moduleRef.get(type, { strict: false });
    this.policies.set(type, policy);
    return policy;
  }

  /** Synchronous for a request without credentials (no promise on the hot path of open routes). */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.rules.of(context) ?? NO_RULE;
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    if (rule.ignoreToken) return true;
    if (rule.ignoreTokenWhen && this.policy(rule.ignoreTokenWhen).ignoresCredentials(request)) return true;

    const principal = this.authenticator.authenticate(request);
    if (principal === null) {
      assertAccess(rule, request, this.authenticator.strategyNames, this.options.messages);
      return true;
    }
    return this.activateAs(principal, rule, request);
  }

  private async activateAs(
    found: Principal | Promise<Principal | null>,
    rule: AccessRule,
    request: Request & AuthenticatedRequest,
  ): Promise<boolean> {
    const principal = await found;
    if (principal) {
      request.principal = principal;
      if (this.users) request.user = await this.users.resolve(principal);
    }
    assertAccess(rule, request, this.authenticator.strategyNames, this.options.messages);
    return true;
  }
}
