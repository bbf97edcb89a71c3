import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { BrokerModule } from '../broker/broker.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { ConfigModule } from '../config/config.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import type { HttpAppOptions } from './create-http-app.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { AdminModule } from '../modules/admin/admin.module.js';
import { ArtifactsModule } from '../modules/artifacts/artifacts.module.js';
import { DiffModule } from '../modules/diff/diff.module.js';
import { HealthModule } from '../health/health.module.js';
import { RegistryModule } from '../modules/registry/index.js';
import { ResolveModule } from '../modules/resolve/resolve.module.js';
import { SearchModule } from '../modules/search/search.module.js';
import { QueueModule } from '../queue/queue.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { FilesModule } from '../storage/files.module.js';
import { StorageModule } from '../storage/storage.module.js';

/** The registry's callers bring the platform's JWTs (WorkerAuth issues them). */
const REGISTRY_AUTH: AuthModuleOptions = { strategies: ['jwt'] };

/** The package and artifact registry: `tb registry`, port 4025, API under /api/v1. */
@Module({})
export class RegistryAppModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    assertConfiguredFor(config, 'registry');
    return {
      module: RegistryAppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        // Cache invalidations reach every registry process: Redis pub/sub across nodes, the primary's relay between workers.
        BrokerModule,
        QueueModule,
        StorageModule,
        FilesModule,
        AuthModule.forRoot(REGISTRY_AUTH),
        // After AuthModule: the limits depend on who the caller is.
        RateLimitModule.forRoot(config.registry.rateLimit),
        // First of the modules with routes: Express tries routes in registration order (this order), and each route
        // tried before the one that answers costs every request a path match. The package detail GET, the hottest
        // read, is then tried after about 20 routes instead of 50. Which route answers a URL does not depend on this
        // order (no two controllers share a URL: test/e2e/registry/route-order.e2e-spec.ts).
        RegistryModule,
        HealthModule.forRoot({ checks: ['database', 'storage', 'queue', 'redis'] }),
        AdminModule,
        ArtifactsModule,
        DiffModule,
        SearchModule,
        ResolveModule,
      ],
    };
  }
}

/** The browser's client-side routes: deep links to these answer with its index.html. */
export const REGISTRY_BROWSER_ROUTES = ['/packages', '/publishers', '/artifacts'];

/** The registry's HTTP choices: the registry's error body, Swagger at /api/docs, API 1.1, no CORS. */
export function registryHttpAppOptions(config: PlatformConfig): HttpAppOptions {
  return {
    title: 'Toolbox Platform — package and artifact registry',
    description:
      'Packages, versions, publishers, artifacts, search, update checks, dependency resolution and deltas (API 1.1).',
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'registry',
    docsPath: 'api/docs',
    apiVersion: '1.1',
    bodyLimit: '2mb',
    cors: false,
    auth: REGISTRY_AUTH,
    // The registry browser (web/registry/, docs/registry-browser.md); its page paths never start with /api or /health.
    webPages: [
      {
        mount: '/',
        folder: 'registry',
        spaRoutes: REGISTRY_BROWSER_ROUTES,
        serviceRoutes: ['/api', '/health'],
        // Behind a proxy that adds a path prefix (PUBLIC_BASE_URL=https://host/tb), the pages' links carry it too.
        baseHref: `${new URL(config.registry.publicBaseUrl ?? 'http://localhost').pathname.replace(/\/+$/, '')}/`,
      },
    ],
  };
}
