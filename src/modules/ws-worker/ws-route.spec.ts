import { Export, Mod } from '../app-core/export.decorator.js';
import { FunctionRegistry } from '../app-core/function-registry.js';
import { resolveWsRoute } from './ws-route.js';

const silent = { log: () => undefined, error: () => undefined };

@Mod('CloudM.Auth')
class AuthMod {
  @Export({ websocketHandler: 'chat', level: 1 })
  chat() {
    return { on_message: () => 'auth' };
  }

  @Export({ websocketHandler: 'only_here' })
  onlyHere() {
    return { on_message: () => 'only' };
  }
}

@Mod('Games')
class GamesMod {
  @Export({ websocketHandler: 'chat' })
  chat() {
    return { on_message: () => 'games' };
  }
}

function registry(): FunctionRegistry {
  const functions = new FunctionRegistry({ appId: 'toolbox', logger: silent });
  functions.registerInstances([new AuthMod(), new GamesMod()]);
  return functions;
}

describe('resolveWsRoute', () => {
  it('finds /ws/{Module}/{handler} with a dotted module and carries the registering entry', () => {
    const result = resolveWsRoute('/ws/CloudM.Auth/chat', registry());
    expect('route' in result && [result.route.key, result.route.entry.options.level]).toEqual(['CloudM.Auth/chat', 1]);
  });

  it('finds /ws/{handler} when one module registers that name', () => {
    const result = resolveWsRoute('/ws/only_here', registry());
    expect('route' in result && result.route.key).toBe('CloudM.Auth/only_here');
  });

  it('refuses /ws/{handler} when several modules register it (409)', () => {
    expect(resolveWsRoute('/ws/chat', registry())).toMatchObject({ status: 409 });
  });

  it.each(['/ws/Games/nope', '/ws/nope', '/other', '/ws/a/b/c', '/ws/%E0%A4%A/chat'])('answers 404 for %s', (path) => {
    expect(resolveWsRoute(path, registry())).toMatchObject({ status: 404 });
  });
});
