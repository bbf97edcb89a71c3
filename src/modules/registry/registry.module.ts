import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CALLER_RESOLVER } from '../../auth/current-caller.decorator.js';
import { USER_RESOLVER } from '../../auth/principal.js';
import { DownloadCounters } from '../../storage/download-counters.js';
import { RegistryAuthController } from './registry-auth.controller.js';
import { CallerService } from './caller.service.js';
import { PackageVersionEntity } from './entities/package-version.entity.js';
import { PackageEntity } from './entities/package.entity.js';
import { PublisherEntity } from './entities/publisher.entity.js';
import { RegistryAccountEntity } from './entities/registry-account.entity.js';
import { PackageCatalogRepository } from './package-catalog.repository.js';
import { PackageVersionsController } from './package-versions.controller.js';
import { PackageVersionsService } from './package-versions.service.js';
import { PackageViewCache } from './package-view-cache.js';
import { PackagesController } from './packages.controller.js';
import { PackagesService } from './packages.service.js';
import { PublishersService } from './publishers.service.js';
import { RegistryEvents } from './registry-events.js';
import { RegistryAccountsService } from './registry-accounts.service.js';
import { StagingSweepService } from './staging-sweep.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([RegistryAccountEntity, PublisherEntity, PackageEntity, PackageVersionEntity])],
  // PackagesController first: its detail GET is the registry's hottest route (see RegistryAppModule on route order).
  controllers: [PackagesController, RegistryAuthController, PackageVersionsController],
  providers: [
    RegistryAccountsService,
    { provide: USER_RESOLVER, useExisting: RegistryAccountsService },
    PublishersService,
    PackagesService,
    PackageVersionsService,
    CallerService,
    { provide: CALLER_RESOLVER, useExisting: CallerService },
    RegistryEvents,
    PackageViewCache,
    PackageCatalogRepository,
    StagingSweepService,
  ],
  exports: [
    USER_RESOLVER,
    RegistryAccountsService,
    PublishersService,
    PackagesService,
    PackageVersionsService,
    CallerService,
    CALLER_RESOLVER,
    RegistryEvents,
    PackageCatalogRepository,
  ],
})
export class RegistryModule implements OnModuleInit {
  constructor(
    private readonly downloads: DownloadCounters,
    private readonly versions: PackageVersionsService,
    private readonly events: RegistryEvents,
    private readonly viewCache: PackageViewCache,
  ) {}

  onModuleInit(): void {
    this.downloads.register(
      'packages',
      (key) => this.versions.countDownload(key),
      (key) => this.versions.visibilityOf(key),
    );
    const invalidate = ({ packageId }: { packageId: string }) => this.viewCache.invalidate(packageId);
    this.events.onPackageChanged(invalidate);
    this.events.onVersionUploaded(invalidate);
    this.events.onVersionRemoved(invalidate);
    this.events.onPackageDeleted(invalidate);
  }
}
