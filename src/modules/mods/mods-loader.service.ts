import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppCoreService, FunctionRegistryService } from '../app-core/index.js';
import { loadInstalledMods, type LoadedMod, type ModLoadReport } from './mod-loader.js';

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

  /**
   * Loads the mods installed since start (or the last call) and runs their `initial` functions: a running
   * server (the MCP transport) picks up `tb mods install` without a restart. Mods already loaded are skipped
   * silently (their functions are registered); returns the newly loaded ones.
   */
  async loadNewMods(): Promise<LoadedMod[]> {
    const known = new Set(this.loadReport.loaded.map((mod) => mod.directory));
    const report = await loadInstalledMods({
      modsDir: this.options.modsDir,
      registry: this.functions,
      runner: this.app,
      hostVersion: this.options.hostVersion,
      runInitial: true,
      skipDirectories: known,
    });
    this.loadReport = {
      loaded: [...this.loadReport.loaded, ...report.loaded],
      failed: report.failed,
    };
    for (const mod of report.loaded) this.logger.log(`loaded newly installed mod ${mod.name}@${mod.version}`);
    return report.loaded;
  }

  /** Which mods loaded (with their function keys) and which were skipped, with the reason. */
  report(): ModLoadReport {
    return this.loadReport;
  }
}
