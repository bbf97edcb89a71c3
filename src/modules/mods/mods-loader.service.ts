import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppCoreService, FunctionRegistryService } from '../app-core/index.js';
import { loadInstalledMods, type ModLoadReport } from './mod-loader.js';

export interface ModsModuleOptions {
  /** Where installed mods live (`<DATA_DIR>/mods` by default). */
  modsDir: string;
  /** The host platform version, checked against each mod's `toolbox_version`. */
  hostVersion?: string;
}

export const MODS_OPTIONS = Symbol('MODS_OPTIONS');

/**
 * Loads the installed mods into the function registry while the application initialises. It runs
 * in `onModuleInit` after the registry's own discovery (ModsModule imports AppCoreModule, so Nest
 * initialises AppCore first), and before bootstrap, where the registry runs every `initial`
 * function, the mods' included, exactly once.
 */
@Injectable()
export class ModsLoaderService implements OnModuleInit {
  private readonly logger = new Logger('Mods');
  private loadReport: ModLoadReport = { loaded: [], failed: [] };

  constructor(
    private readonly functions: FunctionRegistryService,
    private readonly app: AppCoreService,
    @Inject(MODS_OPTIONS) private readonly options: ModsModuleOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    this.loadReport = await loadInstalledMods({
      modsDir: this.options.modsDir,
      registry: this.functions,
      runner: this.app,
      hostVersion: this.options.hostVersion,
      logger: { log: (message) => this.logger.log(message), warn: (message) => this.logger.warn(message) },
    });
  }

  /** Which mods loaded (with their function keys) and which were skipped, with the reason. */
  report(): ModLoadReport {
    return this.loadReport;
  }
}
