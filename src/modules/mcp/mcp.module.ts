import { Module, type DynamicModule } from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import type { Repository } from 'typeorm';
import { INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig } from '../../config/config.js';
import { REDIS_CLIENT } from '../../counters/counters.module.js';
import { authStrategyToken } from '../../auth/auth.options.js';
import { CALLER_RESOLVER } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { McpDoorsService } from './mcp-doors.service.js';
import { McpKeyStrategy } from './mcp-key.strategy.js';
import { mcpPrincipalOf } from './mcp-permissions.js';
import { McpKeyEntity, McpSessionEntity } from './mcp-key.entity.js';
import { McpKeysService } from './mcp-keys.service.js';
import { DatabaseMcpSessionStore, MCP_SESSION_STORE, RedisMcpSessionStore } from './mcp-sessions.js';
import { McpToolsService } from './mcp-tools.service.js';
import { McpController } from './mcp.controller.js';
import { MCP_OPTIONS, type McpOptions } from './mcp.options.js';

/**
 * McpTransport: the application core's functions as MCP tools, behind the REST door and the
 * standard Streamable HTTP endpoint (and stdio, which `tb mcp --stdio` connects to McpToolsService).
 * Needs the app core (ModsModule), the database and the counters module (Redis client) in the app.
 */
@Module({})
export class McpTransportModule {
  /** `core`: the app core with its mods (`ModsModule.forRoot(…)`); `http: false` for stdio (no controller). */
  static forRoot(options: McpOptions, core: DynamicModule, { http = true }: { http?: boolean } = {}): DynamicModule {
    return {
      module: McpTransportModule,
      imports: [core, TypeOrmModule.forFeature([McpKeyEntity, McpSessionEntity])],
      controllers: http ? [McpController] : [],
      providers: [
        { provide: MCP_OPTIONS, useValue: options },
        {
          provide: MCP_SESSION_STORE,
          inject: [INFRASTRUCTURE_CONFIG, REDIS_CLIENT, getRepositoryToken(McpSessionEntity)],
          useFactory: (
            infrastructure: InfrastructureConfig,
            redis: Redis | null,
            sessions: Repository<McpSessionEntity>,
          ) => {
            const limits = { idleMs: options.sessionIdleMs, maxSessions: options.maxSessions };
            return redis
              ? new RedisMcpSessionStore(redis, infrastructure.redisPrefix, limits)
              : new DatabaseMcpSessionStore(sessions, limits);
          },
        },
        McpKeysService,
        McpToolsService,
        McpDoorsService,
        // The keys, for the one AuthGuard (AuthModule.forRoot({ strategies: ['mcp-key'] }) in the app).
        { provide: authStrategyToken('mcp-key'), useClass: McpKeyStrategy },
        {
          provide: CALLER_RESOLVER,
          useValue: { of: async (request: AuthenticatedRequest) => mcpPrincipalOf(request) },
        },
      ],
      exports: [McpKeysService, McpToolsService, McpDoorsService, MCP_SESSION_STORE],
    };
  }
}
