import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/**
 * A route's metadata under `key` (the handler's, else its controller's: Reflector.getAllAndOverride), read
 * once per route instead of on every request. Decorators run when the classes are defined, so what a route
 * declares cannot change while the app serves; a guard asking on each request walked the metadata maps
 * twice per request for the same answer.
 */
export class RouteMetadata<T> {
  private readonly byController = new WeakMap<object, WeakMap<object, { value: T | undefined }>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly key: string,
  ) {}

  of(context: ExecutionContext): T | undefined {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.byController.get(controller);
    if (byHandler === undefined) {
      byHandler = new WeakMap();
      this.byController.set(controller, byHandler);
    }
    let entry = byHandler.get(handler);
    if (entry === undefined) {
      entry = { value: this.reflector.getAllAndOverride<T | undefined>(this.key, [handler, controller]) };
      byHandler.set(handler, entry);
    }
    return entry.value;
  }
}
