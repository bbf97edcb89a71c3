import { Module, type DynamicModule, type INestApplicationContext, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { PlatformConfig } from '../config/config.js';
import type { AppCoreOptions } from '../modules/app-core/index.js';
import { ModsModule } from '../modules/mods/index.js';

/** The application core's options from the platform configuration (APP_ID, DATA_DIR, PLATFORM_* …). */
export function appCoreOptionsFrom(config: PlatformConfig, overrides: Partial<AppCoreOptions> = {}): AppCoreOptions {
  const appCore = config.appCore;
  return {
    appId: appCore.appId,
    dataDir: config.dataDir,
    appVersion: config.version,
    httpBaseUrl: appCore.httpUrl ?? undefined,
    docsRoot: appCore.docsRoot ?? undefined,
    sourceRoots: appCore.docsSourceRoots.length > 0 ? appCore.docsSourceRoots : undefined,
    probe: {
      platformBase: appCore.platformBase ?? undefined,
      platformBasePort: appCore.platformBasePort ?? undefined,
      platformRemoteBase: appCore.platformRemoteBase ?? undefined,
    },
    testTimeoutMs: Math.round(appCore.testTimeoutSeconds * 1000),
    ...overrides,
  };
}

/**
 * The application core with its built-in mods and the installed mods (from `MODS_DIR`), as the
 * command line uses it (`tb functions`, `tb docs`); HTTP workers import the same `ModsModule`.
 */
@Module({})
export class AppCoreAppModule {
  static forRoot(config: PlatformConfig, overrides: Partial<AppCoreOptions> = {}): DynamicModule {
    return {
      module: AppCoreAppModule,
      imports: [
        ModsModule.forRoot({
          appCore: appCoreOptionsFrom(config, overrides),
          modsDir: config.appCore.modsDir,
          hostVersion: config.version,
        }),
      ],
    };
  }
}

/** Boots the core as a Nest application context (no HTTP), runs `work`, then shuts it down (exit functions run). */
export async function withAppCore<T>(
  config: PlatformConfig,
  work: (app: INestApplicationContext) => Promise<T>,
  options: { overrides?: Partial<AppCoreOptions>; logger?: LogLevel[] | false } = {},
): Promise<T> {
  const app = await NestFactory.createApplicationContext(AppCoreAppModule.forRoot(config, options.overrides), {
    logger: options.logger ?? ['error', 'warn'],
  });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}
