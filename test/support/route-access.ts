import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { accessLevelName } from '../../src/auth/access-level.js';
import { ACCESS_METADATA, type AccessRule } from '../../src/auth/access.decorators.js';
import { Authenticator } from '../../src/auth/authenticator.js';

/** A route's declared need: `public`, `authenticated`, `admin`, `permission <p>`, `level <NAME>`, joined with " + ". */
function need(rule: AccessRule): string {
  const parts = [
    rule.public ? 'public' : null,
    rule.admin ? 'admin' : null,
    rule.permission ? `permission ${rule.permission}` : null,
    rule.level !== undefined && !rule.public ? `level ${accessLevelName(rule.level)}` : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0 ? parts.join(' + ') : 'authenticated';
}

/** Method names of a controller's prototype and the classes it extends (a controller may inherit routes). */
function methodNames(prototype: object): string[] {
  const names = new Set<string>();
  for (
    let current: object | null = prototype;
    current && current !== Object.prototype;
    current = Object.getPrototypeOf(current)
  )
    for (const name of Object.getOwnPropertyNames(current)) names.add(name);
  return [...names];
}

/**
 * Every route of a running application with the access it declares: `ignores credentials` (signed URLs, login routes),
 * or the service's strategies in order and the need, e.g. `jwt: public`, `jwt: admin`,
 * `mcp-key: permission read`, `session-cookie|jwt: level LOGGED_IN`. Every service has the one AuthGuard: an app
 * without an Authenticator fails here.
 */
export function declaredRouteAccess(app: INestApplication): Record<string, string> {
  const strategies = app.get(Authenticator, { strict: false }).strategyNames.join('|');
  const routes: Record<string, string> = {};
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prefixes = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      const classRule: AccessRule | undefined = Reflect.getMetadata(ACCESS_METADATA, controller);
      for (const name of methodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name] as object;
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const paths = Reflect.getMetadata(PATH_METADATA, handler);
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const rule: AccessRule = Reflect.getMetadata(ACCESS_METADATA, handler) ?? classRule ?? {};
        const access = rule.ignoreToken ? 'ignores credentials' : `${strategies}: ${need(rule)}`;
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
