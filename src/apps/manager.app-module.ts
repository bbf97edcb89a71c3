import { Module, type DynamicModule } from '@nestjs/common';
import type { PlatformConfig } from '../config/config.js';
import { ManagerAdminModule, type ManagerProcess } from '../modules/workers/index.js';
import type { HttpAppOptions } from './create-http-app.js';

/** The worker manager's admin API (and, unless `--no-ui`, its dashboard page at `/`). */
@Module({})
export class ManagerAppModule {
  static forRoot(manager: ManagerProcess, shutdown: () => void): DynamicModule {
    return { module: ManagerAppModule, imports: [ManagerAdminModule.forRoot(manager, shutdown)] };
  }
}

export function managerHttpAppOptions(config: PlatformConfig, { ui }: { ui: boolean }): HttpAppOptions {
  return {
    title: 'Toolbox Platform — worker manager',
    description:
      'Admin API of `tb workers start` (seed 02 C): workers, scaling, rolling updates, nginx, cluster. Every route ' +
      'needs X-Cluster-Secret (DATA_DIR/manager.json), or arrives through nginx behind basic auth (docs/workers.md).',
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'registry',
    docsPath: 'api/docs',
    apiVersion: '1.0',
    bodyLimit: '64kb',
    cors: false,
    auth: { strategies: [] },
    invalidBodyCode: 'BAD_REQUEST',
    headerSecrets: [
      { scheme: 'cluster_secret', header: 'X-Cluster-Secret', description: 'The manager secret (CLUSTER_SECRET)' },
    ],
    ...(ui ? { webPages: [{ mount: '/', folder: 'manager', serviceRoutes: ['/api', '/admin/manager/api'] }] } : {}),
  };
}
