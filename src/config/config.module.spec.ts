import { Test } from '@nestjs/testing';
import {
  ConfigModule,
  GATEWAY_CONFIG,
  HTTP_WORKER_CONFIG,
  INFRASTRUCTURE_CONFIG,
  REGISTRY_CONFIG,
  SEARCH_CONFIG,
  WS_WORKER_CONFIG,
} from './config.module.js';
import { loadConfig } from './config.js';

describe('ConfigModule', () => {
  const config = loadConfig({ REDIS_PREFIX: 'section-test', GATEWAY_PORT: '4100', WS_MAX_CONNECTIONS: '7' });

  it('provides each section under its own token', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config)] }).compile();
    expect(moduleRef.get(REGISTRY_CONFIG)).toBe(config.registry);
    expect(moduleRef.get(SEARCH_CONFIG)).toBe(config.search);
    expect(moduleRef.get(HTTP_WORKER_CONFIG)).toBe(config.httpWorker);
    expect(moduleRef.get(WS_WORKER_CONFIG)).toMatchObject({ maxConnections: 7 });
    expect(moduleRef.get(GATEWAY_CONFIG)).toMatchObject({ port: 4100 });
    await moduleRef.close();
  });

  it('gives the shared infrastructure without any service section', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config)] }).compile();
    const infrastructure = moduleRef.get(INFRASTRUCTURE_CONFIG);
    expect(infrastructure).toMatchObject({ redisPrefix: 'section-test', dataDir: config.dataDir });
    for (const section of ['registry', 'gateway', 'mcp', 'manager', 'httpWorker', 'services'])
      expect(infrastructure).not.toHaveProperty(section);
    await moduleRef.close();
  });
});
