import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { ConfigModule } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { ManagerAdminModule, type ManagerProcess } from '../modules/workers/index.js';
import type { HttpAppOptions } from './create-http-app.js';

/** Every admin API request carries the manager secret (nginx adds it after basic auth; cluster nodes send it). */
const MANAGER_AUTH: AuthModuleOptions = { strategies: ['cluster-secret'] };

/** The worker manager's admin API (and, unless `--no-ui`, its dashboard page at `/`). */
@Module({})
export class ManagerAppModule {
  static forRoot(config: PlatformConfig, manager: ManagerProcess, shutdown: () => void): DynamicModule {
    return {
      module: ManagerAppModule,
      imports: [
        ConfigModule.forRoot(config),
        AuthModule.forRoot({
          ...MANAGER_AUTH,
          clusterSecret: () => manager.secret,
          messages: { credentialRequired: 'X-Cluster-Secret header required (the manager secret)' },
        }),
        ManagerAdminModule.forRoot(manager, shutdown),
      ],
    };
  }
}

export function managerHttpAppOptions(config: PlatformConfig, { ui }: { ui: boolean }): HttpAppOptions {
  return {
    title: 'Toolbox Platform — worker manager',
    description:
      'Admin API of `tb workers start`: workers, scaling, rolling updates, nginx, cluster. Every route ' +
      'needs X-Cluster-Secret (DATA_DIR/manager.json), or arrives through nginx behind basic auth (docs/workers.md).',
    debug: config.debug,
    log: config.log,
    trustProxy: config.trustProxy,
    errorFormat: 'registry',
    docsPath: 'api/docs',
    apiVersion: '1.0',
    bodyLimit: '64kb',
    cors: false,
    auth: MANAGER_AUTH,
    invalidBodyCode: 'BAD_REQUEST',
    ...(ui ? { webPages: [{ mount: '/', folder: 'manager', serviceRoutes: ['/api', '/admin/manager/api'] }] } : {}),
  };
}
