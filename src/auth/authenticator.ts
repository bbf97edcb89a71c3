import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AUTH_OPTIONS, authStrategyToken, type AuthModuleOptions } from './auth.options.js';
import type { AuthStrategy, AuthStrategyName, CredentialRequest, Principal } from './principal.js';

/**
 * The one credential path of a service: its declared strategies, in order, and the precedence rule. Every
 * strategy looks at every request; one whose credential is present but bad throws (401), even when another
 * strategy found a good credential in the same request (a revoked Bearer token next to a live `tb_session`
 * cookie is refused, never quietly replaced by the cookie). Of the good credentials, the first strategy in the
 * declared order decides. The HTTP guard and the WebSocket handshake both authenticate through it.
 */
@Injectable()
export class Authenticator implements OnModuleInit {
  private resolved: AuthStrategy[] = [];

  constructor(
    @Inject(AUTH_OPTIONS) private readonly options: AuthModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Resolved once every module's providers exist: a product's strategy lives in the product's module. */
  onModuleInit(): void {
    this.resolved = this.options.strategies.map((name) => {
      try {
        return this.moduleRef.get<AuthStrategy>(authStrategyToken(name), { strict: false });
      } catch {
        throw new Error(`The "${name}" auth strategy is declared, but no module of this service provides it`);
      }
    });
  }

  get strategyNames(): readonly AuthStrategyName[] {
    return this.options.strategies;
  }

  /** For tests and transports that build an Authenticator outside Nest. */
  static of(strategies: AuthStrategy[], options: Omit<AuthModuleOptions, 'strategies'> = {}): Authenticator {
    const authenticator = new Authenticator(
      { ...options, strategies: strategies.map((strategy) => strategy.name) },
      null as unknown as ModuleRef,
    );
    authenticator.resolved = strategies;
    return authenticator;
  }

  /** The caller, null when no credential was sent; UNAUTHORIZED when any credential sent is bad. */
  async authenticate(request: CredentialRequest): Promise<Principal | null> {
    let found: Principal | null = null;
    for (const strategy of this.resolved) {
      const principal = await strategy.authenticate(request);
      found ??= principal;
    }
    return found;
  }
}
