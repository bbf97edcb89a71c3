import { Module, type DynamicModule } from '@nestjs/common';
import { FunctionApiController } from './function-api.controller.js';
import { FunctionGateway } from './function-gateway.js';
import { NetworkController } from './network.controller.js';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
import { WorkerHealthController } from './worker-health.controller.js';
import { WorkerLifecycle } from './worker-lifecycle.js';
import { WorkerMetrics } from './worker-metrics.js';

/**
 * The HTTP worker's own routes: `/health`, `/metrics`, the network helpers and `/api/{module}/{function}`.
 * Import it after the app core (ModsModule): its two-segment `/api/…` route must come after every static one.
 */
@Module({})
export class HttpWorkerModule {
  /** `core`: the service's application-core module (`ModsModule.forRoot(…)` or `AppCoreModule.forRoot(…)`), the same object it imports. */
  static forRoot(options: HttpWorkerOptions, core: DynamicModule): DynamicModule {
    return {
      module: HttpWorkerModule,
      imports: [core],
      controllers: [WorkerHealthController, NetworkController, FunctionApiController],
      providers: [{ provide: HTTP_WORKER_OPTIONS, useValue: options }, WorkerMetrics, WorkerLifecycle, FunctionGateway],
      exports: [WorkerLifecycle, WorkerMetrics],
    };
  }
}
