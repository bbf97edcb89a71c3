import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { jest } from '@jest/globals';
import { RouteMetadata } from './route-metadata.js';

const KEY = 'test:rule';

@SetMetadata(KEY, 'controller')
class Routes {
  @SetMetadata(KEY, 'handler')
  own() {}

  inherited() {}
}

class Other {
  bare() {}
}

const contextOf = (controller: object, handler: object) =>
  ({ getClass: () => controller, getHandler: () => handler }) as unknown as ExecutionContext;

describe('RouteMetadata', () => {
  it("answers the handler's value over its controller's, the controller's otherwise, undefined without either", () => {
    const metadata = new RouteMetadata<string>(new Reflector(), KEY);
    expect(metadata.of(contextOf(Routes, Routes.prototype.own))).toBe('handler');
    expect(metadata.of(contextOf(Routes, Routes.prototype.inherited))).toBe('controller');
    expect(metadata.of(contextOf(Other, Other.prototype.bare))).toBeUndefined();
  });

  it('reads the metadata of a route once, however many requests it answers (undefined included)', () => {
    const reflector = new Reflector();
    const read = jest.spyOn(reflector, 'getAllAndOverride');
    const metadata = new RouteMetadata<string>(reflector, KEY);
    for (let request = 0; request < 5; request++) {
      expect(metadata.of(contextOf(Routes, Routes.prototype.own))).toBe('handler');
      expect(metadata.of(contextOf(Other, Other.prototype.bare))).toBeUndefined();
    }
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('keeps a handler shared by two controllers apart', () => {
    const metadata = new RouteMetadata<string>(new Reflector(), KEY);
    expect(metadata.of(contextOf(Other, Routes.prototype.inherited))).toBeUndefined();
    expect(metadata.of(contextOf(Routes, Routes.prototype.inherited))).toBe('controller');
  });
});
