import { Injectable, type CanActivate, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { PlatformError } from '../common/errors.js';
import { ACCESS_METADATA, type AccessRule } from './access.decorators.js';
import { USER_RESOLVER, type AuthenticatedRequest, type UserResolver } from './principal.js';
import { TokenVerifier } from './token-verifier.js';

/**
 * Global guard: every route needs a valid bearer token unless marked @Public(). A token sent to a
 * public route is still verified (a bad one is a 401, never silently anonymous), except on routes
 * that ignore tokens outright (signed URLs).
 */
@Injectable()
export class AuthGuard implements CanActivate, OnModuleInit {
  private users: UserResolver | null = null;

  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
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
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [context.getHandler(), context.getClass()]) ?? {};
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    if (rule.ignoreToken) return true;

    const token = bearerToken(request.headers.authorization);
    if (token) {
      request.principal = this.verifier.verify(token);
      if (this.users) request.user = await this.users.resolve(request.principal);
    } else if (!rule.public) {
      throw new PlatformError('UNAUTHORIZED', 'Authentication required: send Authorization: Bearer <token>');
    }
    if (rule.admin && !isAdmin(request)) throw new PlatformError('FORBIDDEN', 'Admin required');
    return true;
  }
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new PlatformError('UNAUTHORIZED', 'Authorization header must be "Bearer <token>"');
  return match[1];
}

export function isAdmin(request: AuthenticatedRequest): boolean {
  return Boolean(request.user?.isAdmin ?? request.principal?.tokenSaysAdmin);
}
