import { loadConfig } from '../config.js';
import { EnvironmentReader } from './environment-reader.js';
import { readGatewaySection } from './gateway.js';
import { infrastructureOf, readInfrastructureSection } from './infrastructure.js';
import { readManagerSection } from './manager.js';
import { readMcpSection } from './mcp.js';
import { readRegistryListen, readRegistrySection } from './registry.js';
import { readWsWorkerSection } from './ws-worker.js';

describe('configuration sections', () => {
  it('each reads its own variables and records only its own problems', () => {
    const read = new EnvironmentReader({ MANAGER_PORT: 'nine', MCP_MAX_SESSIONS: '3', GATEWAY_PORT: '4001' });
    expect(readManagerSection(read).port).toBe(9005);
    expect(readMcpSection(read).maxSessions).toBe(3);
    expect(read.problems).toEqual(['MANAGER_PORT must be a whole number from 0 to 65535 (got "nine")']);
    expect(readGatewaySection(read, { type: 'sqlite' }, {}).port).toBe(4001);
    expect(read.problems).toHaveLength(1);
  });

  it('lets the command line put the registry address before the environment', () => {
    const read = new EnvironmentReader({ REGISTRY_PORT: '1', PORT: '2', HOST: '10.0.0.1', PUBLIC_BASE_URL: 'x' });
    const listen = readRegistryListen(read, { port: 3 });
    expect(listen).toEqual({ host: '10.0.0.1', port: 3 });
    expect(readRegistrySection(read, listen, {}).port).toBe(3);
    expect(read.problems).toEqual(['PUBLIC_BASE_URL must be an http(s) URL']);
  });

  it('keeps the gateway settings in the database when the database is MySQL', () => {
    const read = new EnvironmentReader({});
    expect(readGatewaySection(read, { type: 'mysql' }, {}).settingsStore).toBe('database');
    expect(readGatewaySection(read, { type: 'sqlite' }, {}).settingsStore).toBe('file');
  });

  it('validates the broker against the Redis URL inside the shared section', () => {
    const read = new EnvironmentReader({ MESSAGE_BROKER: 'redis' });
    expect(readInfrastructureSection(read, {}).messageBroker).toBe('redis');
    expect(read.problems).toEqual(['MESSAGE_BROKER=redis needs REDIS_URL']);
  });

  it('cuts the shared infrastructure out of a whole configuration, without any service section', () => {
    const config = loadConfig({ REDIS_PREFIX: 'p' });
    const shared = infrastructureOf(config);
    expect(shared.redisPrefix).toBe('p');
    expect(shared.dataDir).toBe(config.dataDir);
    expect(Object.keys(shared)).not.toEqual(expect.arrayContaining(['registry']));
    expect(shared).not.toHaveProperty('gateway');
    expect(shared).not.toHaveProperty('services');
  });

  it('reads the WebSocket worker pool from its own prefix', () => {
    const read = new EnvironmentReader({ WS_WORKERS: '3', WS_WORKER_PORT: '9100' });
    expect(readWsWorkerSection(read)).toMatchObject({ count: 3, basePort: 9100, host: '127.0.0.1' });
  });
});
