import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CORE_OPTIONS, type AppCoreOptions } from '../app-core.options.js';
import { Export, Mod } from '../export.decorator.js';
import { FootprintTracker, type Footprint } from '../footprint.js';

/** The version in the nearest package.json above this file, or `0.0.0`. */
export function packageVersion(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      return (
        (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0'
      );
    } catch {
      const parent = dirname(directory);
      if (parent === directory) return '0.0.0';
      directory = parent;
    }
  }
}

/** Built-in `core` mod: what a fresh install can list, run and test. */
@Mod('core')
@Injectable()
export class CoreMod {
  private readonly tracker = new FootprintTracker();
  private readonly version: string;

  constructor(@Inject(APP_CORE_OPTIONS) private readonly options: AppCoreOptions) {
    this.version = options.appVersion ?? packageVersion();
  }

  /** The platform version, the Node.js version and the app id. */
  @Export({ name: 'version', api: true, helper: 'platform and runtime versions', memoryCache: true })
  versionInfo(): { version: string; node: string; app_id: string; virtual_mode: boolean } {
    return {
      version: this.version,
      node: process.version,
      app_id: this.options.appId,
      virtual_mode: this.options.virtualMode ?? false,
    };
  }

  /** Resource metrics of this process (uptime, memory, CPU, disk and network I/O, descriptors). */
  @Export({
    name: 'footprint',
    api: true,
    level: 1,
    helper: 'resource metrics of this process',
    samples: [{ kwargs: { update_tracking: false } }],
  })
  footprint({ update_tracking = true }: { update_tracking?: boolean } = {}): Promise<Footprint> {
    return this.tracker.footprint({ updateTracking: update_tracking });
  }

  /** Liveness of the core itself (the HTTP probe is `GET /api/ping`). */
  @Export({ name: 'ping', api: true, helper: 'answers pong' })
  ping(): { status: 'pong'; timestamp: string } {
    return { status: 'pong', timestamp: new Date().toISOString() };
  }
}
