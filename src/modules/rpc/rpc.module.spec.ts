import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppCoreModule } from '../app-core/app-core.module.js';
import { Export, Mod } from '../app-core/export.decorator.js';
import { currentCaller } from '../app-core/caller.js';
import { AccessPolicyStore, policyPath } from './access-policy.js';
import { RpcModule, RpcService } from './rpc.module.js';

@Mod('remote')
@Injectable()
class RemoteMod {
  @Export()
  whoami() {
    return currentCaller();
  }

  @Export({ level: 2 })
  trusted() {
    return 'trusted only';
  }
}

describe('RpcModule (Nest)', () => {
  let workspace: string;
  let provider: INestApplicationContext;
  let consumer: INestApplicationContext;

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-rpc-module-'));
    const providerDir = join(workspace, 'provider');
    @Module({
      imports: [
        AppCoreModule.forRoot({ appId: 'rpc-spec', dataDir: providerDir }),
        RpcModule.forRoot({ dataDir: providerDir, listen: ['/ip4/127.0.0.1/tcp/0'], serve: true }),
      ],
      providers: [RemoteMod],
    })
    class ProviderApp {}
    @Module({ imports: [RpcModule.forRoot({ dataDir: join(workspace, 'consumer') })] })
    class ConsumerApp {}
    provider = await NestFactory.createApplicationContext(ProviderApp, { logger: false });
    consumer = await NestFactory.createApplicationContext(ConsumerApp, { logger: false });
    await new AccessPolicyStore(policyPath(providerDir)).allow(consumer.get(RpcService).node.peerId, 'remote.*');
  });

  afterAll(async () => {
    await consumer.close();
    await provider.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it('serves the application core to a peer, which calls as {level: policy level, userId: null, transport: rpc}', async () => {
    const address = provider.get(RpcService).node.addresses()[0];
    const rpc = consumer.get(RpcService);
    const result = await rpc.call(address, 'remote.whoami');
    expect(result.get()).toEqual({ level: 1, userId: null, transport: 'rpc' });
    const refused = await rpc.call(address, 'remote.trusted');
    expect(refused.info.exec_code).toBe(403);
    expect(refused.info.help_text).toContain('needs level 2');
  });

  it('stops the peer with the application', async () => {
    const app = await NestFactory.createApplicationContext(RpcModule.forRoot({ dataDir: join(workspace, 'short') }), {
      logger: false,
    });
    const node = app.get(RpcService).node;
    expect(node.node.status).toBe('started');
    await app.close();
    expect(node.node.status).toBe('stopped');
    expect(() => app.get(RpcService).node).toThrow('bootstrap');
  });
});
