import { loadConfig } from '../config/config.js';
import { healthUrl, reachableHost, selectServices, serviceArgv, stopDeadlineMs, upTrustProxy } from './up-services.js';

describe('tb up services', () => {
  it('runs every service by default, the registry first', () => {
    expect(selectServices(undefined)).toEqual(['registry', 'mcp', 'gateway', 'manager']);
    expect(selectServices('  ')).toEqual(['registry', 'mcp', 'gateway', 'manager']);
  });

  it('takes a comma list (UP_SERVICES / --services) in start order, minus --no-<name>', () => {
    expect(selectServices('manager, registry')).toEqual(['registry', 'manager']);
    expect(selectServices(undefined, ['gateway', 'mcp'])).toEqual(['registry', 'manager']);
  });

  it("believes loopback's X-Forwarded-For once the platform's nginx site fronts the services, unless the operator chose", () => {
    expect(upTrustProxy(undefined, ['registry', 'mcp', 'gateway', 'manager'], true)).toBe('loopback');
    expect(upTrustProxy(undefined, ['registry', 'mcp', 'gateway', 'manager'], false)).toBeUndefined();
    expect(upTrustProxy(undefined, ['registry', 'mcp'], true)).toBeUndefined();
    expect(upTrustProxy('false', ['registry', 'manager'], true)).toBe('false');
    expect(upTrustProxy('10.0.0.0/8', ['manager'], false)).toBe('10.0.0.0/8');
  });

  it('rejects unknown names and an empty selection', () => {
    expect(() => selectServices('registry,ollama')).toThrow('unknown service "ollama"');
    expect(() => selectServices(undefined, ['nginx'])).toThrow('unknown service "nginx"');
    expect(() => selectServices('mcp', ['mcp'])).toThrow('keep at least one');
  });

  it('runs each service as its own tb command', () => {
    expect(serviceArgv('registry', { registryPort: 5000, workers: 'auto' })).toEqual([
      'registry',
      '--port',
      '5000',
      '--workers',
      'auto',
    ]);
    expect(serviceArgv('registry', {})).toEqual(['registry']);
    expect(serviceArgv('manager', {})).toEqual(['workers', 'start']);
  });

  it('probes wildcard listeners on loopback, and gives the manager time to drain its workers', () => {
    const config = loadConfig({ MCP_PORT: '9876', GATEWAY_HOST: '::1', DRAIN_TIMEOUT_SECONDS: '15' });
    expect(healthUrl('registry', config)).toBe('http://127.0.0.1:4025/health');
    expect(healthUrl('mcp', config)).toBe('http://127.0.0.1:9876/health');
    expect(healthUrl('gateway', config)).toBe('http://[::1]:4000/health');
    expect(reachableHost('0.0.0.0')).toBe('127.0.0.1');
    expect(stopDeadlineMs('manager', config)).toBe(35_000);
    expect(stopDeadlineMs('mcp', config)).toBe(15_000);
  });
});
