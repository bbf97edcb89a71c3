import { randomUUID } from 'node:crypto';
import semver from 'semver';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { REGISTRY_CONFIG } from '../../config/config.module.js';
import type { RegistryConfig } from '../../config/config.js';
import { StorageService } from '../../storage/storage.service.js';
import { owns, type Caller } from './caller.js';
import { PackageVersionEntity } from './entities/package-version.entity.js';
import { PackageEntity, type PackageType, type Visibility } from './entities/package.entity.js';
import type { PublisherEntity } from './entities/publisher.entity.js';
import { isVisible, whereVisible } from './package-visibility.js';
import { PublishersService } from './publishers.service.js';
import { RegistryEvents } from './registry-events.js';

export interface PackageInput {
  name: string;
  displayName?: string;
  description?: string;
  packageType?: PackageType;
  visibility?: Visibility;
  homepage?: string;
  repository?: string;
  license?: string;
  keywords?: string[];
  readme?: string;
}

export type PackagePatch = Partial<Omit<PackageInput, 'name' | 'packageType'>>;

export interface PackageListFilter {
  page: number;
  perPage: number;
  packageType?: PackageType;
  publisher?: string;
}

export interface PackageWithOwner {
  pkg: PackageEntity;
  publisher: PublisherEntity | null;
}

@Injectable()
export class PackagesService {
  constructor(
    @InjectRepository(PackageEntity) private readonly packages: Repository<PackageEntity>,
    @InjectRepository(PackageVersionEntity) private readonly versions: Repository<PackageVersionEntity>,
    private readonly dataSource: DataSource,
    private readonly publishers: PublishersService,
    private readonly storage: StorageService,
    private readonly events: RegistryEvents,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
  ) {}

  /** The caller's publisher, allowed to publish: it exists and is not suspended. */
  async publishingPublisher(caller: Caller): Promise<PublisherEntity> {
    if (!caller.user) throw new PlatformError('UNAUTHORIZED', 'Authentication required');
    if (!caller.publisherId)
      throw new PlatformError('FORBIDDEN', 'Register as a publisher first (POST /api/v1/auth/register-publisher)');
    const publisher = await this.publishers.findById(caller.publisherId);
    if (!publisher)
      throw new PlatformError('FORBIDDEN', 'Register as a publisher first (POST /api/v1/auth/register-publisher)');
    if (publisher.verificationStatus === 'suspended')
      throw new PlatformError('FORBIDDEN', `Publisher "${publisher.name}" is suspended`);
    return publisher;
  }

  assertVisibilityAllowed(publisher: PublisherEntity, visibility: Visibility): void {
    if (
      visibility === 'public' &&
      this.registry.requireVerifiedPublisher &&
      publisher.verificationStatus !== 'verified'
    ) {
      throw new PlatformError(
        'FORBIDDEN',
        'Public packages require a verified publisher on this registry (REGISTRY_REQUIRE_VERIFIED_PUBLISHER)',
      );
    }
  }

  /** Checks everything a create needs before anything is written. */
  async prepareCreate(caller: Caller, input: PackageInput): Promise<PublisherEntity> {
    const publisher = await this.publishingPublisher(caller);
    this.assertVisibilityAllowed(publisher, input.visibility ?? 'public');
    if (await this.packages.exists({ where: { nameLower: input.name.toLowerCase() } })) {
      throw new PlatformError('CONFLICT', `Package "${input.name}" already exists`);
    }
    return publisher;
  }

  /** Inserts the package row inside the caller's transaction (so a first version can join it). */
  async insert(manager: EntityManager, publisher: PublisherEntity, input: PackageInput): Promise<PackageEntity> {
    const now = new Date();
    const pkg = manager.create(PackageEntity, {
      id: randomUUID(),
      name: input.name,
      nameLower: input.name.toLowerCase(),
      displayName: input.displayName?.trim() || input.name,
      description: input.description ?? '',
      packageType: input.packageType ?? 'mod',
      visibility: input.visibility ?? 'public',
      homepage: input.homepage ?? null,
      repository: input.repository ?? null,
      license: input.license ?? null,
      keywords: input.keywords ?? [],
      readme: input.readme ?? null,
      publisherId: publisher.id,
      latestVersion: null,
      totalDownloads: 0,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await manager.insert(PackageEntity, pkg);
    } catch (error) {
      if (await manager.exists(PackageEntity, { where: { nameLower: pkg.nameLower } })) {
        throw new PlatformError('CONFLICT', `Package "${input.name}" already exists`);
      }
      throw error;
    }
    return pkg;
  }

  async create(caller: Caller, input: PackageInput): Promise<PackageWithOwner> {
    const publisher = await this.prepareCreate(caller, input);
    const pkg = await this.dataSource.transaction((manager) => this.insert(manager, publisher, input));
    await this.events.emit('packageChanged', { packageId: pkg.id });
    return { pkg, publisher };
  }

  async list(caller: Caller, filter: PackageListFilter): Promise<{ items: PackageWithOwner[]; total: number }> {
    const query = this.packages.createQueryBuilder('pkg');
    whereVisible(query, 'pkg', caller, 'list');
    if (filter.packageType) query.andWhere('pkg.package_type = :packageType', { packageType: filter.packageType });
    const { items, total } = await this.publishers.pageWithPublishers(query, 'pkg', filter);
    return { items: items.map(({ row, publisher }) => ({ pkg: row, publisher })), total };
  }

  /** A package the caller may read; others' private packages are a 404 so their existence does not leak. */
  async findReadable(caller: Caller, name: string): Promise<PackageEntity> {
    const pkg = await this.packages.findOne({ where: { nameLower: name.toLowerCase() } });
    if (!pkg || !isVisible(caller, pkg)) throw new PlatformError('NOT_FOUND', `Package "${name}" not found`);
    return pkg;
  }

  /** A package the caller may change: owner's publisher or admin (others who can read it get 403). */
  async findWritable(caller: Caller, name: string): Promise<PackageEntity> {
    const pkg = await this.findReadable(caller, name);
    if (!caller.isAdmin && !owns(caller, pkg))
      throw new PlatformError('FORBIDDEN', `Only the publisher of "${pkg.name}" or an admin may change it`);
    return pkg;
  }

  async detail(
    caller: Caller,
    name: string,
  ): Promise<{ pkg: PackageEntity; publisher: PublisherEntity | null; versions: PackageVersionEntity[] }> {
    const pkg = await this.findReadable(caller, name);
    const [publisher, versions] = await Promise.all([
      this.publishers.findById(pkg.publisherId),
      this.versionsOf(pkg.id),
    ]);
    return { pkg, publisher, versions };
  }

  async versionsOf(packageId: string): Promise<PackageVersionEntity[]> {
    const rows = await this.versions.find({ where: { packageId } });
    return sortVersionsDescending(rows);
  }

  async update(caller: Caller, name: string, patch: PackagePatch): Promise<PackageWithOwner> {
    const pkg = await this.findWritable(caller, name);
    const publisher = await this.publishers.findById(pkg.publisherId);
    if (patch.visibility && patch.visibility !== pkg.visibility && publisher)
      this.assertVisibilityAllowed(publisher, patch.visibility);
    const changes: Partial<PackageEntity> = { updatedAt: new Date() };
    if (patch.displayName !== undefined) changes.displayName = patch.displayName.trim() || pkg.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.visibility !== undefined) changes.visibility = patch.visibility;
    if (patch.homepage !== undefined) changes.homepage = patch.homepage;
    if (patch.repository !== undefined) changes.repository = patch.repository;
    if (patch.license !== undefined) changes.license = patch.license;
    if (patch.keywords !== undefined) changes.keywords = patch.keywords;
    if (patch.readme !== undefined) changes.readme = patch.readme;
    await this.packages.update({ id: pkg.id }, changes);
    await this.events.emit('packageChanged', { packageId: pkg.id });
    return { pkg: { ...pkg, ...changes } as PackageEntity, publisher };
  }

  /**
   * Admin only. Rows go in one transaction; every stored object (primary and mirrors) is removed by
   * retried jobs, so nothing is left behind even while storage is briefly down.
   */
  async delete(caller: Caller, name: string): Promise<PackageEntity> {
    if (!caller.isAdmin) throw new PlatformError('FORBIDDEN', 'Deleting a package requires an admin');
    const pkg = await this.packages.findOne({ where: { nameLower: name.toLowerCase() } });
    if (!pkg) throw new PlatformError('NOT_FOUND', `Package "${name}" not found`);
    const versions = await this.versions.find({ where: { packageId: pkg.id } });
    await this.dataSource.transaction(async (manager) => {
      await manager.delete(PackageVersionEntity, { packageId: pkg.id });
      await manager.delete(PackageEntity, { id: pkg.id });
    });
    for (const version of versions) await this.storage.delete(version.storageKey);
    await this.events.emit('packageDeleted', {
      packageId: pkg.id,
      packageName: pkg.name,
      actorUserId: caller.user?.id ?? null,
    });
    return pkg;
  }

  findById(id: string): Promise<PackageEntity | null> {
    return this.packages.findOne({ where: { id } });
  }
}

export function sortVersionsDescending<T extends { version: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => semver.rcompare(a.version, b.version));
}
