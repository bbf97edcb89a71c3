import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { ACCESS_METADATA, type AccessRule } from '../../src/auth/access.decorators.js';

/** Every route of a running application with the access it declares (`public`, `signed-url`, `authenticated`, `admin`). */
export function declaredRouteAccess(app: INestApplication): Record<string, string> {
  const routes: Record<string, string> = {};
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prefixes = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      const classRule: AccessRule | undefined = Reflect.getMetadata(ACCESS_METADATA, controller);
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const paths = Reflect.getMetadata(PATH_METADATA, handler);
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const rule: AccessRule = Reflect.getMetadata(ACCESS_METADATA, handler) ?? classRule ?? {};
        const access = rule.ignoreToken ? 'signed-url' : rule.public ? 'public' : rule.admin ? 'admin' : 'authenticated';
        for (const prefix of prefixes) {
          for (const path of ([] as string[]).concat(paths)) {
            const full = `/${[prefix, path].filter((part) => part && part !== '/').join('/')}`.replace(/\/+/g, '/');
            routes[`${method} ${full}`] = access;
          }
        }
      }
    }
  }
  return routes;
}
