import { Global, Module, type DynamicModule } from '@nestjs/common';
import { infrastructureOf, type PlatformConfig } from './config.js';

/*
 * One token per section, so a provider states which settings it reads and a test of it builds only those:
 * `@Inject(REGISTRY_CONFIG) registry: RegistryConfig`. A provider that needs two sections injects two tokens.
 * The whole PlatformConfig is not injectable: the apps hand it to the modules' forRoot, which pass on a slice.
 */
/** The shared infrastructure (`InfrastructureConfig`: dataDir, database, Redis, storage, logs, the platform secret …). */
export const INFRASTRUCTURE_CONFIG = Symbol('INFRASTRUCTURE_CONFIG');
/** `config.registry` (`RegistryConfig`): the registry, artifacts and diff modules. */
export const REGISTRY_CONFIG = Symbol('REGISTRY_CONFIG');
/** `config.search` (`SearchConfig`). */
export const SEARCH_CONFIG = Symbol('SEARCH_CONFIG');
/** `config.httpWorker` (`HttpWorkerConfig`). */
export const HTTP_WORKER_CONFIG = Symbol('HTTP_WORKER_CONFIG');
/** `config.wsWorker` (`WsWorkerConfig`). */
export const WS_WORKER_CONFIG = Symbol('WS_WORKER_CONFIG');
/** `config.gateway` (`GatewayConfig`). */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** Every token this module provides, with the part of the configuration each holds. */
function sections(config: PlatformConfig): Array<[symbol, unknown]> {
  return [
    [INFRASTRUCTURE_CONFIG, infrastructureOf(config)],
    [REGISTRY_CONFIG, config.registry],
    [SEARCH_CONFIG, config.search],
    [HTTP_WORKER_CONFIG, config.httpWorker],
    [WS_WORKER_CONFIG, config.wsWorker],
    [GATEWAY_CONFIG, config.gateway],
  ];
}

/** Makes the validated configuration injectable everywhere, section by section. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    const provided = sections(config);
    return {
      module: ConfigModule,
      providers: provided.map(([token, value]) => ({ provide: token, useValue: value })),
      exports: provided.map(([token]) => token),
    };
  }
}
