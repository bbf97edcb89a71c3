import { Module, type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-keys/api-key.entity.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuthGuard } from './auth.guard.js';
import { AUTH_OPTIONS, AUTH_STRATEGIES, type AuthModuleOptions } from './auth.options.js';
import type { AuthStrategy, AuthStrategyName } from './principal.js';
import { SessionCookies } from './session-cookie/session-cookies.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtBearerStrategy } from './strategies/jwt-bearer.strategy.js';
import { SessionCookieStrategy } from './strategies/session-cookie.strategy.js';
import { TokenVerifier } from './token-verifier.js';

const STRATEGY_CLASSES: Record<AuthStrategyName, Type<AuthStrategy>> = {
  jwt: JwtBearerStrategy,
  'api-key': ApiKeyStrategy,
  'session-cookie': SessionCookieStrategy,
};

/** The service's strategies, in the configured order, for the guard. */
function strategiesProvider(names: readonly AuthStrategyName[]): Provider {
  return {
    provide: AUTH_STRATEGIES,
    inject: names.map((name) => STRATEGY_CLASSES[name]),
    useFactory: (...strategies: AuthStrategy[]) => strategies,
  };
}

/**
 * Authentication for one service, configured with its strategies (tried in order): the registry uses
 * `forRoot({ strategies: ['jwt'] })`. Rate limits are not part of auth: a service that wants them imports
 * RateLimitModule after this module, since the limits depend on who the caller is.
 */
@Module({})
export class AuthModule {
  /**
   * Auth for one service: `AuthModule.forRoot({ strategies: ['api-key', 'jwt'] })`. `api-key` needs the
   * DatabaseModule (the `api_keys` table) and exports ApiKeysService; `session-cookie` needs the
   * CountersModule (logout denylist) and exports SessionCookies (issue and end sessions).
   */
  static forRoot(options: AuthModuleOptions): DynamicModule {
    const names = [...new Set(options.strategies)];
    if (names.length === 0)
      throw new Error('AuthModule.forRoot needs at least one strategy (jwt, api-key, session-cookie)');
    const uses = (name: AuthStrategyName) => names.includes(name);
    const providers: Provider[] = [
      TokenVerifier,
      { provide: AUTH_OPTIONS, useValue: { ...options, strategies: names } },
      ...names.map((name) => STRATEGY_CLASSES[name]),
      strategiesProvider(names),
      { provide: APP_GUARD, useClass: AuthGuard },
      ...(uses('api-key') ? [ApiKeysService] : []),
      ...(uses('session-cookie') ? [SessionCookies] : []),
    ];
    return {
      module: AuthModule,
      global: true,
      imports: [JwtModule.register({}), ...(uses('api-key') ? [TypeOrmModule.forFeature([ApiKeyEntity])] : [])],
      providers,
      exports: [
        TokenVerifier,
        AUTH_OPTIONS,
        // Transports outside Nest's HTTP pipeline (the WebSocket upgrade) authenticate with the same strategies.
        AUTH_STRATEGIES,
        ...(uses('api-key') ? [ApiKeysService] : []),
        ...(uses('session-cookie') ? [SessionCookies] : []),
      ],
    };
  }
}
