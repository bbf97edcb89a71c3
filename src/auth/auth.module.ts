import { Module, type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import type { InfrastructureConfig } from '../config/config.js';
import { REDIS_CLIENT } from '../counters/counters.module.js';
import { AuthGuard } from './auth.guard.js';
import { AUTH_OPTIONS, authStrategyToken, type AuthModuleOptions } from './auth.options.js';
import { Authenticator } from './authenticator.js';
import { AUTH_STRATEGY_NAMES, type AuthStrategy, type AuthStrategyName } from './principal.js';
import { SessionCookies } from './session-cookie/session-cookies.js';
import {
  AUTH_STORE,
  DatabaseAuthStore,
  MemoryAuthStore,
  RedisAuthStore,
  type AuthStore,
} from './shared-store/auth-store.js';
import { Revocations } from './shared-store/revocations.js';
import { ClusterSecretStrategy } from './strategies/cluster-secret.strategy.js';
import { JwtBearerStrategy } from './strategies/jwt-bearer.strategy.js';
import { SessionCookieStrategy } from './strategies/session-cookie.strategy.js';
import { TokenVerifier } from './token-verifier.js';

/** The strategies the platform itself provides; a product's own (gateway-key, mcp-key) come from its module. */
const PLATFORM_STRATEGIES: Partial<Record<AuthStrategyName, Type<AuthStrategy>>> = {
  jwt: JwtBearerStrategy,
  'session-cookie': SessionCookieStrategy,
  'cluster-secret': ClusterSecretStrategy,
};

/**
 * The shared AuthStore: Redis when the service has a Redis client (REDIS_URL), else its database, else
 * (a service with neither) this process's memory.
 */
const authStoreProvider: Provider = {
  provide: AUTH_STORE,
  inject: [INFRASTRUCTURE_CONFIG, { token: REDIS_CLIENT, optional: true }, { token: DataSource, optional: true }],
  useFactory: (
    config: InfrastructureConfig,
    redis: Redis | null | undefined,
    dataSource: DataSource | undefined,
  ): AuthStore => {
    if (redis) return new RedisAuthStore(redis, config.redisPrefix);
    if (dataSource) return new DatabaseAuthStore(dataSource);
    return new MemoryAuthStore();
  },
};

/**
 * Authentication for one service, configured with the strategies it takes: the registry uses
 * `forRoot({ strategies: ['jwt'] })`, the workers `['session-cookie', 'jwt']`, the gateway `['gateway-key']`,
 * the MCP transport `['mcp-key']`, the manager `['cluster-secret']`. Rate limits are not part of auth: a service
 * that wants them imports RateLimitModule after this module, since the limits depend on who the caller is.
 */
@Module({})
export class AuthModule {
  /**
   * Installs the one global AuthGuard with the service's Authenticator. `session-cookie` exports SessionCookies
   * (issue and end sessions). Every service gets the shared AuthStore and Revocations (Redis through the
   * CountersModule's client when REDIS_URL is set, else the database, else memory). `gateway-key` and `mcp-key`
   * need the product module that provides them (GatewayModule, McpTransportModule) in the same app.
   */
  static forRoot(options: AuthModuleOptions): DynamicModule {
    const names = [...new Set(options.strategies)];
    if (names.length === 0)
      throw new Error(`AuthModule.forRoot needs at least one strategy (${AUTH_STRATEGY_NAMES.join(', ')})`);
    if (names.includes('cluster-secret') && !options.clusterSecret)
      throw new Error('The cluster-secret strategy needs AuthModuleOptions.clusterSecret');
    const uses = (name: AuthStrategyName) => names.includes(name);
    const platformStrategies = names.flatMap((name) => {
      const strategy = PLATFORM_STRATEGIES[name];
      return strategy ? [{ provide: authStrategyToken(name), useClass: strategy }] : [];
    });
    const providers: Provider[] = [
      TokenVerifier,
      authStoreProvider,
      Revocations,
      { provide: AUTH_OPTIONS, useValue: { ...options, strategies: names } },
      ...(uses('session-cookie') ? [SessionCookies] : []),
      ...platformStrategies,
      Authenticator,
      { provide: APP_GUARD, useClass: AuthGuard },
    ];
    return {
      module: AuthModule,
      global: true,
      imports: [JwtModule.register({})],
      providers,
      exports: [
        TokenVerifier,
        AUTH_STORE,
        Revocations,
        AUTH_OPTIONS,
        // Transports outside Nest's HTTP pipeline (the WebSocket upgrade) authenticate the same way.
        Authenticator,
        ...(uses('session-cookie') ? [SessionCookies] : []),
      ],
    };
  }
}
