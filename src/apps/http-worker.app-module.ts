import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { Module, type DynamicModule, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { BrokerModule } from '../broker/broker.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { ConfigModule } from '../config/config.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { HealthModule } from '../health/health.module.js';
import {
  DRAIN_IDLE_CONNECTION_MS,
  HttpWorkerModule,
  WORKER_KEEP_ALIVE_TIMEOUT_MS,
  WorkerLifecycle,
  type HttpWorkerOptions,
} from '../modules/http-worker/index.js';
import { corsOriginRule } from '../modules/http-worker/cors-origins.js';
import { ModsModule } from '../modules/mods/index.js';
import { WorkerAuthModule } from '../modules/worker-auth/index.js';
import { appCoreOptionsFrom } from './app-core.app-module.js';
import { createHttpApp, listen, type HttpAppOptions } from './create-http-app.js';

/** Browsers bring the `tb_session` cookie, scripts and apps a Bearer JWT (WorkerAuth issues both). */
export function httpWorkerAuth(config: PlatformConfig): AuthModuleOptions {
  return { strategies: ['session-cookie', 'jwt'], sessionCookie: { secure: config.httpWorker.secureCookies } };
}

/** The worker's options from its configuration section; the id defaults to `http_<8 hex>` (every worker id is `<type>_<hex>`). */
export function httpWorkerOptionsFrom(config: PlatformConfig): HttpWorkerOptions {
  const section = config.httpWorker;
  return {
    workerId: section.workerId ?? `http_${randomBytes(4).toString('hex')}`,
    openModules: section.openModules,
    uploadMaxBytes: section.uploadMaxBytes,
    uploadDir: section.uploadDir,
    bodyLimitBytes: section.bodyLimitBytes,
    clientLogMaxBytes: section.clientLogMaxBytes,
    drainTimeoutSeconds: section.drainTimeoutSeconds,
  };
}

export interface HttpWorkerAppExtras {
  /** More modules whose `@Export` functions the worker serves (tests register their functions this way). */
  imports?: ModuleMetadata['imports'];
}

/**
 * The HTTP worker: the application core's functions at `/api/{module}/{function}` for
 * browsers, apps and scripts, with the platform's sessions, `/health` with drain state, `/metrics`.
 */
@Module({})
export class HttpWorkerAppModule {
  static forRoot(config: PlatformConfig, extras: HttpWorkerAppExtras = {}): DynamicModule {
    assertConfiguredFor(config, 'httpWorker');
    const appCore = ModsModule.forRoot({
      appCore: appCoreOptionsFrom(config),
      modsDir: config.appCore.modsDir,
      hostVersion: config.version,
    });
    return {
      module: HttpWorkerAppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        // Functions reach the WS workers' connections (`app.ws`) through the broker.
        BrokerModule,
        AuthModule.forRoot(httpWorkerAuth(config)),
        // WorkerAuth: users, tokens, /validateSession, OAuth, magic link.
        WorkerAuthModule.forRoot(config),
        HealthModule.forRoot({ checks: ['database', 'redis'], liveness: false }),
        appCore,
        ...(extras.imports ?? []),
        // Last: its `/api/{module}/{function}` route comes after every static `/api/…` route above.
        HttpWorkerModule.forRoot(httpWorkerOptionsFrom(config), appCore),
      ],
    };
  }
}

/** The worker's HTTP choices: Result-shaped errors, Swagger at /docs/api (its routes own /api), CORS, its own drain. */
export function httpWorkerHttpAppOptions(config: PlatformConfig): HttpAppOptions {
  return {
    title: 'Toolbox Platform — HTTP worker',
    description:
      "The application core's functions at /api/{module}/{function} (those registered with api: true), the worker's health and metrics, and the network probe.",
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'result',
    docsPath: 'docs/api',
    apiVersion: config.version,
    bodyLimit: config.httpWorker.bodyLimitBytes,
    // Browsers may cache a preflight for a day, as the original worker allowed.
    cors: { origins: corsOriginRule(config.httpWorker.corsOrigins), credentials: true, maxAgeSeconds: 86400 },
    auth: httpWorkerAuth(config),
    shutdownHooks: false,
  };
}

export interface RunningHttpWorker {
  app: INestApplication;
  url: string;
  lifecycle: WorkerLifecycle;
  /**
   * Graceful stop: `/health` turns 503, the listener takes no new connections, in-flight requests finish and
   * idle connections are left for nginx to close (at most `timeoutMs` in all, the configured DRAIN_TIMEOUT_SECONDS
   * by default), then the app closes. Resolves true when every request finished in time.
   */
  drain(timeoutMs?: number): Promise<boolean>;
}

/** Builds and starts an HTTP worker on the configured host and port (`--port`). */
export async function startHttpWorkerApp(
  config: PlatformConfig,
  extras: HttpWorkerAppExtras = {},
  appOptions: Partial<HttpAppOptions> = {},
): Promise<RunningHttpWorker> {
  const app = await createHttpApp(HttpWorkerAppModule.forRoot(config, extras), {
    ...httpWorkerHttpAppOptions(config),
    ...appOptions,
  });
  const lifecycle = app.get(WorkerLifecycle);
  app.use(lifecycle.track);
  const server = app.getHttpServer() as Server;
  lifecycle.watch(server);
  // nginx closes idle upstream connections first (upstream-keep-alive.ts); headers may take as long.
  server.keepAliveTimeout = WORKER_KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = WORKER_KEEP_ALIVE_TIMEOUT_MS + 1000;
  const url = await listen(app, { host: config.httpWorker.host, port: config.httpWorker.basePort }, 'HttpWorker');
  let draining: Promise<boolean> | null = null;
  return {
    app,
    url,
    lifecycle,
    drain(timeoutMs = config.httpWorker.drainTimeoutSeconds * 1000) {
      draining ??= drainApp(app, lifecycle, timeoutMs);
      return draining;
    },
  };
}

async function drainApp(app: INestApplication, lifecycle: WorkerLifecycle, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  lifecycle.startDraining();
  const server = app.getHttpServer() as Server;
  // Stop listening, nothing more: a refused connect sends nginx to the next worker. (http.Server's own close also
  // closes idle connections, among them one nginx has just opened whose request has not arrived: nginx would see
  // it reset after sending, and does not resend a POST then.)
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const finished = await lifecycle.whenIdle(timeoutMs);
  // Busy connections close after their answer (Connection: close); idle ones once nginx has dropped them.
  await lifecycle.whenConnectionsQuiet(DRAIN_IDLE_CONNECTION_MS, Math.max(0, deadline - Date.now()));
  await app.close();
  await closed;
  return finished;
}
