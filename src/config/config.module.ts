import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
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
function sectionProviders(config: PlatformConfig): Provider[] {
  return [
    { provide: INFRASTRUCTURE_CONFIG, useValue: infrastructureOf(config) },
    { provide: REGISTRY_CONFIG, useValue: config.registry },
    { provide: SEARCH_CONFIG, useValue: config.search },
    { provide: HTTP_WORKER_CONFIG, useValue: config.httpWorker },
    { provide: WS_WORKER_CONFIG, useValue: config.wsWorker },
    { provide: GATEWAY_CONFIG, useValue: config.gateway },
  ];
}

/** Makes the validated configuration injectable everywhere, section by section. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    const providers = sectionProviders(config);
    return {
      module: ConfigModule,
      providers,
      exports: providers.map((provider) => (provider as { provide: symbol }).provide),
    };
  }
}
