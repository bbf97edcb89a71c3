import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { createHttpApp } from '../../../src/apps/create-http-app.js';
import { ManagerAppModule, managerHttpAppOptions } from '../../../src/apps/manager.app-module.js';
import { loadConfig } from '../../../src/config/config.js';
import { ManagerProcess } from '../../../src/modules/workers/index.js';
import { declaredRouteAccess } from '../../support/route-access.js';

/**
 * Every route of the worker manager's admin API with its declared access under the one AuthGuard (the manager
 * secret in X-Cluster-Secret): a new route fails this test until it is listed here. The manager is built, not
 * started: no worker runs.
 */
describe('worker manager route access', () => {
  let app: INestApplication;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-manager-routes-'));
    const config = loadConfig({ DATA_DIR: dataDir, NGINX_BIN: '/nonexistent/nginx' });
    const manager = new ManagerProcess(config, { entry: 'tb', execArgv: [], env: {}, log: () => undefined });
    app = await createHttpApp(
      ManagerAppModule.forRoot(config, manager, () => undefined),
      {
        ...managerHttpAppOptions(config, { ui: false }),
        logger: false,
      },
    );
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('declares the expected access for every route', () => {
    expect(declaredRouteAccess(app)).toEqual(EXPECTED);
  });
});

const EXPECTED: Record<string, string> = {
  'DELETE /admin/manager/api/cluster/nodes/:id': 'cluster-secret: authenticated',
  'DELETE /api/cluster/nodes/:id': 'cluster-secret: authenticated',
  'GET /admin/manager/api/cluster/nodes': 'cluster-secret: authenticated',
  'GET /admin/manager/api/cluster/services': 'cluster-secret: authenticated',
  'GET /admin/manager/api/cluster/verify': 'cluster-secret: authenticated',
  'GET /admin/manager/api/health': 'cluster-secret: authenticated',
  'GET /admin/manager/api/metrics': 'cluster-secret: authenticated',
  'GET /admin/manager/api/status': 'cluster-secret: authenticated',
  'GET /admin/manager/api/workers': 'cluster-secret: authenticated',
  'GET /api/cluster/nodes': 'cluster-secret: authenticated',
  'GET /api/cluster/services': 'cluster-secret: authenticated',
  'GET /api/cluster/verify': 'cluster-secret: authenticated',
  'GET /api/health': 'cluster-secret: authenticated',
  'GET /api/metrics': 'cluster-secret: authenticated',
  'GET /api/status': 'cluster-secret: authenticated',
  'GET /api/workers': 'cluster-secret: authenticated',
  'POST /admin/manager/api/cluster/join': 'cluster-secret: authenticated',
  'POST /admin/manager/api/nginx/reload': 'cluster-secret: authenticated',
  'POST /admin/manager/api/restart': 'cluster-secret: authenticated',
  'POST /admin/manager/api/rolling-update': 'cluster-secret: authenticated',
  'POST /admin/manager/api/scale': 'cluster-secret: authenticated',
  'POST /admin/manager/api/shutdown': 'cluster-secret: authenticated',
  'POST /admin/manager/api/workers/restart': 'cluster-secret: authenticated',
  'POST /admin/manager/api/workers/start': 'cluster-secret: authenticated',
  'POST /admin/manager/api/workers/stop': 'cluster-secret: authenticated',
  'POST /api/cluster/join': 'cluster-secret: authenticated',
  'POST /api/nginx/reload': 'cluster-secret: authenticated',
  'POST /api/restart': 'cluster-secret: authenticated',
  'POST /api/rolling-update': 'cluster-secret: authenticated',
  'POST /api/scale': 'cluster-secret: authenticated',
  'POST /api/shutdown': 'cluster-secret: authenticated',
  'POST /api/workers/restart': 'cluster-secret: authenticated',
  'POST /api/workers/start': 'cluster-secret: authenticated',
  'POST /api/workers/stop': 'cluster-secret: authenticated',
};
