import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegistryAccountsService, RegistryEvents, RegistryModule } from '../registry/index.js';
import { AuditController } from './audit.controller.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditEntryEntity } from './entities/audit-entry.entity.js';
import { VerificationRequestEntity } from './entities/verification-request.entity.js';
import { PublisherAdminController } from './publisher-admin.controller.js';
import { PublisherVerificationService } from './publisher-verification.service.js';
import { PublishersController } from './publishers.controller.js';

/**
 * Publishers, their verification and the audit log. Its routes share no URL with
 * another controller's (`packages/admin/pending` and `packages/admin/:id/verify` have no counterpart
 * of the same shape under `packages/:name`), so the order modules and controllers are imported in
 * does not matter; test/e2e/registry/route-order.e2e-spec.ts keeps it so.
 */
@Module({
  imports: [TypeOrmModule.forFeature([VerificationRequestEntity, AuditEntryEntity]), RegistryModule],
  controllers: [PublisherAdminController, PublishersController, AuditController],
  providers: [PublisherVerificationService, AuditLogService],
  exports: [AuditLogService],
})
export class AdminModule implements OnModuleInit {
  constructor(
    private readonly events: RegistryEvents,
    private readonly accounts: RegistryAccountsService,
    private readonly audit: AuditLogService,
  ) {}

  onModuleInit(): void {
    this.events.onPackageDeleted(async (event) => {
      const actor = event.actorUserId ? await this.accounts.findById(event.actorUserId) : null;
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
