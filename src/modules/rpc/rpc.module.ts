import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppCoreService } from '../app-core/app-core.service.js';
import type { Result } from '../app-core/result.js';
import type { RpcCallOptions, RpcPeer } from './rpc-client.js';
import { RpcPeerNode, type StartRpcPeerOptions } from './rpc-peer.js';

export interface RpcModuleOptions extends Omit<StartRpcPeerOptions, 'runner'> {
  /** Serve this application's core to other peers (needs the AppCoreModule in the application). */
  serve?: boolean;
}

export const RPC_MODULE_OPTIONS = Symbol('RPC_MODULE_OPTIONS');

/**
 * The RPC peer of a Nest application: started at bootstrap, stopped at shutdown. `call` is the remote
 * member of the application core's `runFunction` family:
 * `await rpc.call(peer, 'module.function', { args, kwargs, timeout, signal })` → Result.
 */
@Injectable()
export class RpcService implements OnApplicationBootstrap, OnApplicationShutdown {
  private peer: RpcPeerNode | undefined;

  constructor(
    @Inject(RPC_MODULE_OPTIONS) private readonly options: RpcModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const runner = this.options.serve ? this.moduleRef.get(AppCoreService, { strict: false }) : undefined;
    this.peer = await RpcPeerNode.start({ ...this.options, runner });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.peer?.stop();
    this.peer = undefined;
  }

  /** The running peer (its id, addresses, stats). */
  get node(): RpcPeerNode {
    if (!this.peer) throw new Error('the RPC peer starts at application bootstrap');
    return this.peer;
  }

  call(peer: RpcPeer, name: string, options?: RpcCallOptions): Promise<Result> {
    return this.node.call(peer, name, options);
  }
}

@Module({})
export class RpcModule {
  static forRoot(options: RpcModuleOptions): DynamicModule {
    return {
      module: RpcModule,
      providers: [{ provide: RPC_MODULE_OPTIONS, useValue: options }, RpcService],
      exports: [RpcService],
    };
  }
}
