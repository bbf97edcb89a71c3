import { operationIdOf } from './openapi.js';

describe('operationIdOf', () => {
  it('names an operation by its controller and method in snake case', () => {
    expect(operationIdOf('PackagesController', 'list')).toBe('packages_list');
    expect(operationIdOf('PackageVersionsController', 'downloadUrl')).toBe('package_versions_download_url');
  });

  it('keeps the first path of a multi-path route unsuffixed and numbers the others', () => {
    expect(operationIdOf('SearchController', 'suggest[0]')).toBe('search_suggest');
    expect(operationIdOf('SearchController', 'suggest[1]')).toBe('search_suggest_1');
  });

  it('keeps a controller name without the Controller suffix whole', () => {
    expect(operationIdOf('HealthChecks', 'ready')).toBe('health_checks_ready');
  });
});
