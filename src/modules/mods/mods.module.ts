import { Module, type DynamicModule } from '@nestjs/common';
import { AppCoreModule, type AppCoreOptions } from '../app-core/index.js';
import { MODS_OPTIONS, ModsLoaderService, type ModsModuleOptions } from './mods-loader.service.js';

/**
 * The application core with the installed mods loaded: use `ModsModule.forRoot` where a service
 * would use `AppCoreModule.forRoot` (it imports and re-exports it) to also serve the mods.
 */
@Module({})
export class ModsModule {
  static forRoot(options: ModsModuleOptions & { appCore: AppCoreOptions }): DynamicModule {
    const { appCore, ...modsOptions } = options;
    return {
      module: ModsModule,
      imports: [AppCoreModule.forRoot(appCore)],
      providers: [
        { provide: MODS_OPTIONS, useValue: { hostVersion: appCore.appVersion, ...modsOptions } },
        ModsLoaderService,
      ],
      exports: [AppCoreModule, ModsLoaderService],
    };
  }
}
