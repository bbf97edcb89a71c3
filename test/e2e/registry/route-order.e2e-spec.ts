import { RequestMethod, type DynamicModule, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN, uploadVersion } from '../../support/registry-fixtures.js';

interface Route {
  method: string;
  path: string;
  controller: string;
}

/** Every route of the application with the controller that declares it. */
function routesOf(app: INestApplication): Route[] {
  const routes: Route[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prefixes = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const paths = Reflect.getMetadata(PATH_METADATA, handler);
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        for (const prefix of prefixes) {
          for (const path of ([] as string[]).concat(paths)) {
            routes.push({
              method,
              path: `/${[prefix, path].filter((part) => part && part !== '/').join('/')}`.replace(/\/+/g, '/'),
              controller: controller.name,
            });
          }
        }
      }
    }
  }
  return routes;
}

/** Whether one URL could match both paths (same number of segments, each equal or a parameter on one side). */
function overlap(a: string, b: string): boolean {
  const left = a.split('/');
  const right = b.split('/');
  if (left.some((part) => part.startsWith('*')) || right.some((part) => part.startsWith('*')))
    return a.split('/*')[0] === b.split('/*')[0];
  return (
    left.length === right.length &&
    left.every((part, index) => part === right[index] || part.startsWith(':') || right[index].startsWith(':'))
  );
}

/** The registry's root module with its imports in reverse order: feature modules, then the infrastructure. */
function reversed(root: DynamicModule): DynamicModule {
  return { ...root, imports: [...(root.imports ?? [])].reverse() };
}

/**
 * Which controller answers a URL must not depend on the order the app module imports the feature
 * modules in (Express tries routes in registration order, and that order follows the imports).
 */
describe.each(backends())('route order on $name', (backend) => {
  describe.each([
    ['as declared', (root: DynamicModule) => root],
    ['in reverse', reversed],
  ])('with the modules imported %s', (_order, arrange) => {
    let registry: RegistryUnderTest;
    let app: INestApplication;
    let api: ApiClient;
    let admin: ApiClient;
    let owner: ApiClient;

    beforeAll(async () => {
      registry = await startRegistry(backend, {}, arrange);
      app = registry.app;
      api = registry.api;
      admin = registry.as(ADMIN);
      owner = registry.as({ id: 'order-owner', username: 'order-owner' });
    });

    afterAll(async () => {
      await registry?.close();
    });

    it('has no two controllers whose routes one URL could match', () => {
      const routes = routesOf(app);
      const clashes = routes.flatMap((a, index) =>
        routes
          .slice(index + 1)
          .filter((b) => a.method === b.method && a.controller !== b.controller && overlap(a.path, b.path))
          .map((b) => `${a.method} ${a.path} (${a.controller}) ~ ${b.path} (${b.controller})`),
      );
      expect(clashes).toEqual([]);
    });

    it('serves a package named like a static path segment ("admin") and the admin routes side by side', async () => {
      expect((await owner.post('/api/v1/auth/register-publisher', { name: 'order-pub' })).status).toBe(201);
      expect((await owner.post('/api/v1/packages', { name: 'admin' })).status).toBe(201);
      expect((await uploadVersion(owner, 'admin', '1.0.0')).status).toBe(201);
      const detail = await api.get('/api/v1/packages/admin');
      expect(detail.status).toBe(200);
      expect(detail.body.name).toBe('admin');
      const version = await api.get('/api/v1/packages/admin/versions/1.0.0', { Accept: 'application/json' });
      expect(version.status).toBe(200);
      expect(version.body.version).toBe('1.0.0');

      expect(
        (await owner.post('/api/v1/publishers/verify', { method: 'github', data: { username: 'order' } })).status,
      ).toBe(202);
      const pending = await admin.get('/api/v1/packages/admin/pending');
      expect(pending.status).toBe(200);
      const item = pending.body.publishers.find((p: { name: string }) => p.name === 'order-pub');
      expect(item).toBeDefined();
      const verified = await admin.post(`/api/v1/packages/admin/${item.id}/verify`, { notes: 'route order' });
      expect(verified.status).toBe(200);
      expect(verified.body.verification_status).toBe('verified');
    });
  });
});
