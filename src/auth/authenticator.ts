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

  /**
   * The caller, null when no credential was sent; UNAUTHORIZED when any credential sent is bad. Synchronous
   * (null) when every strategy answered at once that its credential is absent; a Promise as soon as one has to
   * check a credential, and every later strategy is still asked.
   */
  authenticate(request: CredentialRequest): Principal | null | Promise<Principal | null> {
    const strategies = this.resolved;
    let found: Principal | null = null;
    for (let index = 0; index < strategies.length; index++) {
      const outcome = strategies[index].authenticate(request);
      if (isPromise(outcome)) return this.authenticateFrom(request, index, outcome, found);
      found ??= outcome;
    }
    return found;
  }

  /** The rest of `authenticate` once strategy `index` answered with `pending`. */
  private async authenticateFrom(
    request: CredentialRequest,
    index: number,
    pending: Promise<Principal | null>,
    found: Principal | null,
  ): Promise<Principal | null> {
    found ??= await pending;
    for (const strategy of this.resolved.slice(index + 1)) {
      const principal = await strategy.authenticate(request);
      found ??= principal;
    }
    return found;
  }
}

function isPromise(value: unknown): value is Promise<Principal | null> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
