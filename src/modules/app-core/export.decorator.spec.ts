import { Export, Mod, readExportOptions, readModOptions, resolveExportOptions } from './export.decorator.js';

@Mod('CloudM')
class CloudMod {
  @Export()
  plain() {
    return 1;
  }

  @Export({ name: 'get_user', modName: 'Other', level: 1, memoryCacheTtl: 5 })
  getUser() {
    return 2;
  }

  notExported() {
    return 3;
  }
}

describe('@Export', () => {
  it('applies the seed defaults', () => {
    expect(readExportOptions(CloudMod.prototype.plain)).toEqual({
      name: 'plain',
      modName: '',
      helper: '',
      version: null,
      test: true,
      restrictInVirtualMode: false,
      api: false,
      initial: false,
      exitF: false,
      testOnly: false,
      memoryCache: false,
      fileCache: false,
      row: false,
      requestAsKwarg: false,
      state: null,
      level: 0,
      ignoreCredentials: false,
      memoryCacheMaxSize: 100,
      memoryCacheTtl: 300,
      samples: null,
      interface: 'tb',
      preCompute: null,
      postCompute: null,
      apiMethods: ['AUTO'],
      websocketHandler: null,
      websocketContext: false,
      parameters: null,
      schema: null,
    });
  });

  it('keeps the options it is given', () => {
    expect(readExportOptions(CloudMod.prototype.getUser)).toMatchObject({
      name: 'get_user',
      modName: 'Other',
      level: 1,
      memoryCacheTtl: 5,
    });
  });

  it('leaves methods without the decorator unmarked', () => {
    expect(readExportOptions(CloudMod.prototype.notExported)).toBeUndefined();
  });

  it('stores the module name of @Mod on the class', () => {
    expect(readModOptions(CloudMod)).toEqual({ name: 'CloudM' });
  });

  it('uses the tb interface when the interface is none', () => {
    expect(resolveExportOptions({ interface: null }, 'f').interface).toBe('tb');
  });
});
