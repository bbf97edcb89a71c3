import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { BrokerModule } from '../broker/broker.module.js';
import { ConfigModule } from '../config/config.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { HealthModule } from '../health/health.module.js';
import type { AppCoreOptions } from '../modules/app-core/index.js';
import { ModsModule } from '../modules/mods/index.js';
import { WsWorkerModule } from '../modules/ws-worker/index.js';
import { appCoreOptionsFrom } from './app-core.app-module.js';
import type { HttpAppOptions } from './create-http-app.js';

/** Browsers bring the `tb_session` cookie (or a `token` query parameter); scripts a platform JWT. */
export const WS_WORKER_AUTH: AuthModuleOptions = { strategies: ['session-cookie', 'jwt'] };

/**
 * The WebSocket worker (`tb worker ws`): the app core's `websocketHandler`s at `/ws/{Module}/{handler}`,
 * channels across workers through the message broker, and a plain `GET /health` on the same port.
 */
@Module({})
export class WsWorkerAppModule {
  static forRoot(config: PlatformConfig, overrides: Partial<AppCoreOptions> = {}): DynamicModule {
    assertConfiguredFor(config, 'wsWorker');
    return {
      module: WsWorkerAppModule,
      imports: [
        ConfigModule.forRoot(config),
        // The platform's database: without Redis, the shared auth store (revocations, ended sessions) lives
        // there, so a logout on an HTTP worker holds on this worker too.
        DatabaseModule.forRoot(),
        CountersModule,
        BrokerModule,
        AuthModule.forRoot(WS_WORKER_AUTH),
        HealthModule.forRoot({ checks: ['database', 'redis'] }),
        WsWorkerModule.forRoot(
          ModsModule.forRoot({
            appCore: appCoreOptionsFrom(config, overrides),
            modsDir: config.appCore.modsDir,
            hostVersion: config.version,
          }),
        ),
      ],
    };
  }
}

export function wsWorkerHttpAppOptions(config: PlatformConfig): HttpAppOptions {
  return {
    title: 'Toolbox Platform — WebSocket worker',
    description: 'WebSocket connections at /ws/{Module}/{handler} (see docs/ws-worker.md); plain HTTP only for health.',
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'result',
    docsPath: 'api/docs',
    apiVersion: config.version,
    cors: false,
    auth: WS_WORKER_AUTH,
  };
}
