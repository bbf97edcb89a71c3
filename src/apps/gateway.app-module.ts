import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { BrokerModule } from '../broker/broker.module.js';
import { ConfigModule } from '../config/config.module.js';
import { CountersModule } from '../counters/counters.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { assertConfiguredFor, type PlatformConfig } from '../config/config.js';
import { HealthModule } from '../health/health.module.js';
import type { LivenessDetails } from '../health/health.controller.js';
import type { ReadinessCheck } from '../health/readiness-checks.js';
import { GatewayModule, GatewaySettingsService, gatewayBodyLimits } from '../modules/gateway/index.js';
import type { HttpAppOptions } from './create-http-app.js';

/** Readiness of the gateway: the model runtime answers `/api/version`. */
const MODEL_RUNTIME_CHECK: ReadinessCheck = {
  name: 'model_runtime',
  requires: [GatewaySettingsService],
  async check(modules) {
    const settings = modules.get(GatewaySettingsService, { strict: false });
    if ((await settings.client.version()) === null) throw new Error(`no answer from ${settings.ollamaUrl}`);
  },
};

/**
 * `/health` as the original gateway's clients read it: `timestamp` and `active_models` (the installed models as
 * last seen), still a liveness answer that never waits on the runtime (readiness does: MODEL_RUNTIME_CHECK).
 */
const GATEWAY_LIVENESS: LivenessDetails = {
  requires: [GatewaySettingsService],
  details(modules) {
    const settings = modules.get(GatewaySettingsService, { strict: false });
    return { timestamp: new Date().toISOString(), active_models: settings.catalog.knownCount() };
  },
};

/** The gateway's keys (`sk-tb-…`, and its admin key), with the refusal texts OpenAI-compatible clients read. */
const GATEWAY_AUTH: AuthModuleOptions = {
  strategies: ['gateway-key'],
  messages: {
    credentialRequired: "You didn't provide an API key. Send it as 'Authorization: Bearer sk-…' (the SDK's api_key).",
    adminRequired: 'This route needs the admin key',
  },
};

/** The model gateway: `tb gateway`, port 4000, the OpenAI-compatible API under /v1. */
@Module({})
export class GatewayAppModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    assertConfiguredFor(config, 'gateway');
    return {
      module: GatewayAppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        CountersModule,
        // Settings and key changes reach every gateway node at once (Redis pub/sub when configured).
        BrokerModule,
        // Before GatewayModule: its rate-limit guard needs to know who is calling.
        AuthModule.forRoot(GATEWAY_AUTH),
        GatewayModule,
        HealthModule.forRoot({ checks: ['database', 'redis', MODEL_RUNTIME_CHECK], livenessDetails: GATEWAY_LIVENESS }),
      ],
    };
  }
}

/** The gateway's HTTP choices: OpenAI's error body, Swagger at /docs (its /api/… paths are the landing data), bodies read after the key check. */
export function gatewayHttpAppOptions(config: PlatformConfig): HttpAppOptions {
  return {
    title: 'Toolbox Platform — model gateway',
    description: 'OpenAI-compatible chat, embeddings and models over a local Ollama runtime (docs/gateway.md).',
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'openai',
    docsPath: 'docs',
    apiVersion: '1.0',
    // Read after the key check, each route with its cap (docs/gateway.md, "Body limits").
    bodyLimit: config.gateway.bodyMaxBytes,
    routeBodyLimits: gatewayBodyLimits(config),
    cors: false,
    auth: GATEWAY_AUTH,
    // The landing page, /admin/, /user/, /playground/ and /live (web/gateway/, docs/web-pages.md).
    webPages: [{ mount: '/', folder: 'gateway', serviceRoutes: ['/v1', '/api', '/admin/api', '/user/api'] }],
  };
}
