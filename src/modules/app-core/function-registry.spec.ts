import { jest } from '@jest/globals';
import { PlatformError } from '../../common/errors.js';
import { Export, Mod } from './export.decorator.js';
import { FunctionRegistry } from './function-registry.js';

const silent = { log: () => undefined, error: jest.fn() };

@Mod('CloudM')
class FirstMod {
  calls: string[] = [];

  /** Gets a user. */
  @Export({ name: 'get_user', schema: { type: 'object', properties: { name: { type: 'string' } } } })
  getUser(name: string) {
    return name;
  }

  @Export({ initial: true })
  start() {
    this.calls.push('start');
  }

  @Export({ exitF: true })
  stop() {
    this.calls.push('stop');
    throw new Error('exit failed');
  }

  @Export({ testOnly: true })
  onlyInTests() {
    return 1;
  }

  @Export({ websocketHandler: 'chat' })
  chat() {
    return { on_connect: () => 'hello', onMessage: (message: string) => message.toUpperCase() };
  }
}

@Mod('CloudM')
class SecondMod {
  @Export({ name: 'get_user' })
  fetchUser() {
    return 'other';
  }
}

@Mod('Both')
class BothCachesMod {
  @Export({ memoryCache: true, fileCache: true })
  cached() {
    return 1;
  }
}

class Unnamed {
  @Export({ modName: 'Explicit' })
  one() {
    return 1;
  }
  @Export()
  two() {
    return 2;
  }
}

describe('FunctionRegistry', () => {
  const registry = (appId = 'main') => new FunctionRegistry({ appId, logger: silent });

  it('keys functions Module.function from @Mod and the export name', () => {
    const functions = registry();
    functions.registerInstance(new FirstMod());
    expect(functions.has('CloudM.get_user')).toBe(true);
  });

  it('lets modName override the class module name and falls back to the class name', () => {
    const functions = registry();
    expect(functions.registerInstance(new Unnamed()).sort()).toEqual(['Explicit.one', 'Unnamed.two']);
  });

  it('fails on a key registered twice, naming both places', () => {
    const functions = registry();
    functions.registerInstance(new FirstMod());
    expect(() => functions.registerInstance(new SecondMod())).toThrow(
      'Function CloudM.get_user is registered twice: by FirstMod.getUser and by SecondMod.fetchUser',
    );
  });

  it('registers nothing from an instance that has a duplicate', () => {
    const functions = registry();
    expect(() => functions.registerInstances([new FirstMod(), new SecondMod()])).toThrow(PlatformError);
    expect(functions.entries()).toHaveLength(0);
  });

  it('refuses memoryCache and fileCache together', () => {
    expect(() => registry().registerInstance(new BothCachesMod())).toThrow(
      /memoryCache and fileCache cannot both be set/,
    );
  });

  it('skips testOnly functions unless the app id contains test', () => {
    const production = registry('main');
    production.registerInstance(new FirstMod());
    const testing = registry('ci-test-1');
    testing.registerInstance(new FirstMod());
    expect([production.has('CloudM.onlyInTests'), testing.has('CloudM.onlyInTests')]).toEqual([false, true]);
  });

  it('runs initial functions on request', async () => {
    const functions = registry();
    const mod = new FirstMod();
    functions.registerInstance(mod);
    await functions.runInitialFunctions();
    expect(mod.calls).toEqual(['start']);
  });

  it('runs exit functions and logs their errors instead of raising them', async () => {
    const functions = registry();
    const mod = new FirstMod();
    functions.registerInstance(mod);
    silent.error.mockClear();
    await expect(functions.runExitFunctions()).resolves.toBeUndefined();
    expect(mod.calls).toEqual(['stop']);
    expect(silent.error).toHaveBeenCalledWith(
      expect.stringContaining('exit function CloudM.stop (FirstMod.stop) failed: exit failed'),
      expect.any(String),
    );
  });

  it('lists functions as data with parameters, schema and options', () => {
    const functions = registry();
    functions.registerInstance(new FirstMod());
    const description = functions.list().find((item) => item.key === 'CloudM.get_user');
    expect(description).toMatchObject({
      module: 'CloudM',
      function: 'get_user',
      source: 'FirstMod.getUser',
      parameters: ['name'],
      schema: { type: 'object', properties: { name: { type: 'string' } } },
      http_methods: ['POST'],
      options: { mod_name: 'CloudM', level: 0, memory_cache_max_size: 100, api_methods: ['AUTO'] },
    });
    expect(JSON.parse(JSON.stringify(description))).toEqual(description);
  });

  it('registers websocket handlers under module/handler with seed names', () => {
    const functions = registry();
    functions.registerInstance(new FirstMod());
    const handlers = functions.websocketHandlers().get('CloudM/chat');
    expect([handlers?.on_connect?.(), handlers?.on_message?.('hi'), handlers?.on_disconnect]).toEqual([
      'hello',
      'HI',
      undefined,
    ]);
  });

  it('unregisters every function of a module', () => {
    const functions = registry();
    functions.registerInstance(new FirstMod());
    functions.unregister('CloudM');
    expect([functions.entries().length, functions.websocketHandlers().size]).toEqual([0, 0]);
  });
});
