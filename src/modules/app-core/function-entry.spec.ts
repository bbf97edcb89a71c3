import { Export, Mod, readExportOptions } from './export.decorator.js';
import { ArgumentError, bindArguments, createFunctionEntry, httpMethodsFor } from './function-entry.js';

@Mod('m')
class Functions {
  @Export()
  none() {
    return 0;
  }
  @Export()
  two(first: number, second = 2) {
    return first + second;
  }
  @Export({ requestAsKwarg: true })
  withRequest(value: number, request?: unknown) {
    return [value, request];
  }
  @Export()
  keywords({ query, limit = 1 }: { query?: string; limit?: number }) {
    return [query, limit];
  }
  @Export({ apiMethods: ['AUTO', 'PUT'] })
  mixed(value: number) {
    return value;
  }
}

const instance = new Functions();
const entryOf = (name: keyof Functions) => createFunctionEntry(instance, name, readExportOptions(instance[name])!, 'm');

describe('bindArguments', () => {
  it('passes positional arguments through', () => {
    expect(bindArguments(entryOf('two'), [1, 5], undefined)).toEqual([1, 5]);
  });

  it('maps keyword arguments onto their parameter positions', () => {
    expect(bindArguments(entryOf('two'), undefined, { second: 9, first: 1 })).toEqual([1, 9]);
  });

  it('refuses an unknown keyword', () => {
    expect(() => bindArguments(entryOf('two'), [], { third: 1 })).toThrow(ArgumentError);
  });

  it('refuses a keyword also given positionally', () => {
    expect(() => bindArguments(entryOf('two'), [1], { first: 2 })).toThrow(/multiple values/);
  });

  it('passes the request as the request keyword when asked to', () => {
    expect(bindArguments(entryOf('withRequest'), [1], undefined, { url: '/x' })).toEqual([1, { url: '/x' }]);
  });

  it('gathers keywords into one object for a destructured parameter', () => {
    expect(bindArguments(entryOf('keywords'), undefined, { query: 'q' })).toEqual([{ query: 'q' }]);
  });

  it('refuses unknown keywords of a destructured parameter', () => {
    expect(() => bindArguments(entryOf('keywords'), undefined, { other: 1 })).toThrow(/unexpected keyword/);
  });
});

describe('httpMethodsFor', () => {
  it('answers GET and POST for AUTO without parameters', () => {
    expect(httpMethodsFor(entryOf('none'))).toEqual(['GET', 'POST']);
  });

  it('answers POST for AUTO with parameters', () => {
    expect(httpMethodsFor(entryOf('two'))).toEqual(['POST']);
  });

  it('does not count the request parameter', () => {
    expect(httpMethodsFor({ ...entryOf('withRequest'), parameters: ['request'] })).toEqual(['GET', 'POST']);
  });

  it('keeps explicit methods next to AUTO', () => {
    expect(httpMethodsFor(entryOf('mixed'))).toEqual(['POST', 'PUT']);
  });
});
