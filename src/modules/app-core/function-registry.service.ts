import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { APP_CORE_OPTIONS, type AppCoreOptions } from './app-core.options.js';
import { FunctionRegistry } from './function-registry.js';

/**
 * The function registry of a Nest application: on module init it discovers every provider and
 * controller with `@Export` methods (a duplicate key or an invalid option fails the start-up, naming
 * the places); initial functions run at bootstrap, exit functions at shutdown.
 * Mods created outside Nest join through `registerInstance`.
 */
@Injectable()
export class FunctionRegistryService
  extends FunctionRegistry
  implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown
{
  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(APP_CORE_OPTIONS) options: AppCoreOptions,
  ) {
    const logger = new Logger('FunctionRegistry');
    super({
      appId: options.appId,
      logger: { log: (message) => logger.log(message), error: (message, trace) => logger.error(message, trace) },
    });
  }

  onModuleInit(): void {
    const instances = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as object | undefined;
      // Request-scoped and not-yet-created providers have no static instance to call.
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      instances.add(instance);
    }
    this.registerInstances([...instances]);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runInitialFunctions();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runExitFunctions();
  }
}
