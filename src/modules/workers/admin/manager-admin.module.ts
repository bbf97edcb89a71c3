import { Module, type DynamicModule } from '@nestjs/common';
import type { ManagerProcess } from '../manager-process.js';
import { ManagerAdminController } from './manager-admin.controller.js';
import { ManagerClusterController } from './manager-cluster.controller.js';
import { MANAGER_PROCESS, MANAGER_SHUTDOWN } from './manager-admin.tokens.js';

@Module({})
export class ManagerAdminModule {
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
}
