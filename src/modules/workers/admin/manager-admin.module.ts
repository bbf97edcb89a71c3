import { Module, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { refuseCrossSiteForms } from './cross-site-forms.js';
import type { ManagerProcess } from '../manager-process.js';
import { ManagerAdminController } from './manager-admin.controller.js';
import { ManagerClusterController } from './manager-cluster.controller.js';
import { MANAGER_PROCESS, MANAGER_SHUTDOWN } from './manager-admin.tokens.js';

@Module({})
export class ManagerAdminModule implements NestModule {
  static forRoot(manager: ManagerProcess, shutdown: () => void): DynamicModule {
    return {
      module: ManagerAdminModule,
      controllers: [ManagerAdminController, ManagerClusterController],
      providers: [
        { provide: MANAGER_PROCESS, useValue: manager },
        { provide: MANAGER_SHUTDOWN, useValue: shutdown },
      ],
      exports: [MANAGER_PROCESS],
    };
  }

  /** Beside the secret check, on every route: no state change a form of another site could send (cross-site-forms.ts). */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(refuseCrossSiteForms).forRoutes(ManagerAdminController, ManagerClusterController);
  }
}
