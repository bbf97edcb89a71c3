import { join, resolve } from 'node:path';
import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { APP_CORE_OPTIONS, type AppCoreOptions } from './app-core.options.js';
import { AppCoreService } from './app-core.service.js';
import { CoreMod } from './builtin/core.mod.js';
import { DocsMod } from './builtin/docs.mod.js';
import { DocsService } from './docs/docs.service.js';
import { FootprintTracker } from './footprint.js';
import { FunctionRegistryService } from './function-registry.service.js';
import { NetworkProbe } from './network-probe.js';
import { ProbeController } from './probe.controller.js';
import { WsChannels } from './ws-channels.js';
import { LocalMessageBroker } from '../../broker/local-message-broker.js';
import { MESSAGE_BROKER, type MessageBroker } from '../../broker/message-broker.js';

/**
 * The application core: the function registry (every `@Export` method of the application's
 * providers, discovered at bootstrap), the runner, the docs system, the footprint, the network
 * probe and its `/api/ping` and `/api/geo` routes, plus the built-in `core` and `docs` mods.
 */
@Module({})
export class AppCoreModule {
  static forRoot(options: AppCoreOptions): DynamicModule {
    const docsRoot = resolve(options.docsRoot ?? join(process.cwd(), 'docs'));
    const sourceRoots = (options.sourceRoots ?? [join(process.cwd(), 'src')]).map((root) => resolve(root));
    return {
      module: AppCoreModule,
      imports: [DiscoveryModule],
      controllers: [ProbeController],
      providers: [
        { provide: APP_CORE_OPTIONS, useValue: options },
        FunctionRegistryService,
        {
          // The workers import BrokerModule (Redis, or the manager's relay); elsewhere this process is alone.
          provide: WsChannels,
          inject: [{ token: MESSAGE_BROKER, optional: true }],
          useFactory: (broker?: MessageBroker) => new WsChannels(broker ?? new LocalMessageBroker()),
        },
        AppCoreService,
        {
          provide: DocsService,
          useFactory: () =>
            new DocsService({ docsRoot, sourceRoots, indexPath: join(options.dataDir, 'docs-index.json') }),
        },
        { provide: FootprintTracker, useFactory: () => new FootprintTracker() },
        {
          provide: NetworkProbe,
          useFactory: () =>
            new NetworkProbe({
              platformBase: options.probe?.platformBase,
              platformBasePort: options.probe?.platformBasePort,
              platformRemoteBase: options.probe?.platformRemoteBase,
            }),
        },
        CoreMod,
        DocsMod,
      ],
      exports: [
        APP_CORE_OPTIONS,
        FunctionRegistryService,
        AppCoreService,
        WsChannels,
        DocsService,
        FootprintTracker,
        NetworkProbe,
      ],
    };
  }
}
