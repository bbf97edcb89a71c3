import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegistryEvents } from '../registry/registry-events.js';
import { RegistryModule } from '../registry/registry.module.js';
import { UsersService } from '../registry/users.service.js';
import { AuditController } from './audit.controller.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditEntryEntity } from './entities/audit-entry.entity.js';
import { VerificationRequestEntity } from './entities/verification-request.entity.js';
import { PublisherAdminController } from './publisher-admin.controller.js';
import { PublisherVerificationService } from './publisher-verification.service.js';
import { PublishersController } from './publishers.controller.js';

/**
 * Publishers, their verification and the audit log (seed 01; issue 3). Import it before RegistryModule
 * in the service module: Express matches routes in registration order, and `packages/admin/…` must be
 * matched here before the registry's `packages/:name/…`.
 */
@Module({
  imports: [TypeOrmModule.forFeature([VerificationRequestEntity, AuditEntryEntity]), RegistryModule],
  // Static `publishers/admin/…` paths before `publishers/:name`.
  controllers: [PublisherAdminController, PublishersController, AuditController],
  providers: [PublisherVerificationService, AuditLogService],
  exports: [AuditLogService],
})
export class AdminModule implements OnModuleInit {
  constructor(
    private readonly events: RegistryEvents,
    private readonly users: UsersService,
    private readonly audit: AuditLogService,
  ) {}

  onModuleInit(): void {
    this.events.onPackageDeleted(async (event) => {
      const actor = event.actorUserId ? await this.users.findById(event.actorUserId) : null;
      await this.audit.record({
        actorUserId: event.actorUserId,
        actor: actor?.username ?? 'system',
        action: 'package.delete',
        targetType: 'package',
        targetId: event.packageId,
        target: event.packageName,
      });
    });
  }
}
