import { Module, type DynamicModule } from '@nestjs/common';
import { WsWorkerMetricsController } from './ws-worker-metrics.controller.js';
import { WsWorkerServer } from './ws-worker.server.js';

/**
 * The WebSocket worker on the app's HTTP server. `appCore` is the application core module to serve
 * (`ModsModule.forRoot(…)` or `AppCoreModule.forRoot(…)`); the app also needs BrokerModule and AuthModule
 * with the `session-cookie` and `jwt` strategies.
 */
@Module({})
export class WsWorkerModule {
  static forRoot(appCore: DynamicModule): DynamicModule {
    return {
      module: WsWorkerModule,
      imports: [appCore],
      controllers: [WsWorkerMetricsController],
      providers: [WsWorkerServer],
      exports: [WsWorkerServer],
    };
  }
}
