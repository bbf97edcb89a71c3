import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, type Repository, type SelectQueryBuilder } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import type { Caller } from './caller.js';
import { PackageEntity } from './entities/package.entity.js';
import { PublisherEntity, type VerificationStatus } from './entities/publisher.entity.js';
import { PackageViewCache } from './package-view-cache.js';
import { whereVisible } from './package-visibility.js';
import { RegistryEvents } from './registry-events.js';

export interface PublisherStats {
  packageCount: number;
  totalDownloads: number;
}

export interface RegisterPublisherInput {
  name: string;
  displayName?: string;
  email?: string;
  homepage?: string;
}

@Injectable()
export class PublishersService {
  constructor(
    @InjectRepository(PublisherEntity) private readonly publishers: Repository<PublisherEntity>,
    @InjectRepository(PackageEntity) private readonly packages: Repository<PackageEntity>,
    private readonly viewCache: PackageViewCache,
    private readonly events: RegistryEvents,
  ) {}

  async register(ownerUserId: string, input: RegisterPublisherInput): Promise<PublisherEntity> {
    if (await this.findByOwner(ownerUserId)) throw new PlatformError('CONFLICT', 'You already have a publisher');
    const nameLower = input.name.toLowerCase();
    if (await this.publishers.exists({ where: { nameLower } })) {
      throw new PlatformError('CONFLICT', `Publisher name "${input.name}" is already taken`);
    }
    const now = new Date();
    const publisher = this.publishers.create({
      id: randomUUID(),
      name: input.name,
      nameLower,
      displayName: input.displayName?.trim() || input.name,
      email: input.email ?? null,
      homepage: input.homepage ?? null,
      verificationStatus: 'unverified',
      ownerUserId,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.publishers.insert(publisher);
    } catch (error) {
      // The unique indexes settle a race between two registrations.
      if (await this.publishers.exists({ where: [{ nameLower }, { ownerUserId }] })) {
        throw new PlatformError(
          'CONFLICT',
          `Publisher name "${input.name}" is already taken or you already have a publisher`,
        );
      }
      throw error;
    }
    return publisher;
  }

  /**
   * One page of a publisher-owned listing (packages, artifacts), most recently updated first, each row with
   * its publisher. `publisher` (name or id) narrows it; an unknown publisher gives an empty page.
   */
  async pageWithPublishers<T extends { publisherId: string }>(
    query: SelectQueryBuilder<T>,
    alias: string,
    filter: { page: number; perPage: number; publisher?: string },
  ): Promise<{ items: Array<{ row: T; publisher: PublisherEntity | null }>; total: number }> {
    if (filter.publisher) {
      const publisher = await this.findByNameOrId(filter.publisher);
      if (!publisher) return { items: [], total: 0 };
      query.andWhere(`${alias}.publisher_id = :publisherId`, { publisherId: publisher.id });
    }
    const [rows, total] = await query
      .orderBy(`${alias}.updated_at`, 'DESC')
      .addOrderBy(`${alias}.id`, 'ASC')
      .skip(offsetOf(filter.page, filter.perPage))
      .take(filter.perPage)
      .getManyAndCount();
    const publishers = await this.findByIds(rows.map((row) => row.publisherId));
    return { items: rows.map((row) => ({ row, publisher: publishers.get(row.publisherId) ?? null })), total };
  }

  findByOwner(ownerUserId: string): Promise<PublisherEntity | null> {
    return this.publishers.findOne({ where: { ownerUserId } });
  }

  findById(id: string): Promise<PublisherEntity | null> {
    return this.publishers.findOne({ where: { id } });
  }

  async findByIds(ids: string[]): Promise<Map<string, PublisherEntity>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.publishers.createQueryBuilder('p').where('p.id IN (:...ids)', { ids: unique }).getMany();
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** By name (case-insensitive) or by id. */
  async findByNameOrId(nameOrId: string): Promise<PublisherEntity | null> {
    return this.publishers.findOne({ where: [{ nameLower: nameOrId.toLowerCase() }, { id: nameOrId }] });
  }

  async setStatus(id: string, status: VerificationStatus): Promise<void> {
    await this.publishers.update({ id }, { verificationStatus: status, updatedAt: new Date() });
    // Package views carry `publisher.verified`, and so does the search index's stored score.
    await this.viewCache.clear();
    await this.events.emit('publisherChanged', { publisherId: id, verified: status === 'verified' });
  }

  /**
   * Moves the status only if it is still one of `from` (compare-and-set, so two admins acting at once
   * cannot both succeed). Pass the caller's transaction manager to commit it with related rows; the
   * caller emits `publisherChanged` once that commits, when verified-ness changed.
   */
  async transitionStatus(
    id: string,
    from: readonly VerificationStatus[],
    to: VerificationStatus,
    manager: EntityManager = this.publishers.manager,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(PublisherEntity)
      .set({ verificationStatus: to, updatedAt: new Date() })
      .where('id = :id', { id })
      .andWhere('verification_status IN (:...from)', { from: [...from] })
      .execute();
    // Package views carry `publisher.verified`.
    await this.viewCache.clear();
    return (result.affected ?? 0) > 0;
  }

  /** Publishers by name, optionally limited to some statuses. */
  async list(filter: {
    page: number;
    perPage: number;
    statuses?: VerificationStatus[];
  }): Promise<{ items: PublisherEntity[]; total: number }> {
    const query = this.publishers.createQueryBuilder('publisher');
    if (filter.statuses)
      query.where('publisher.verification_status IN (:...statuses)', {
        statuses: filter.statuses.length ? filter.statuses : ['none'],
      });
    const [items, total] = await query
      .orderBy('publisher.name_lower', 'ASC')
      .skip(offsetOf(filter.page, filter.perPage))
      .take(filter.perPage)
      .getManyAndCount();
    return { items, total };
  }

  /** package_count and total_downloads over the packages the caller may see. */
  async stats(publisherIds: string[], caller: Caller): Promise<Map<string, PublisherStats>> {
    const result = new Map<string, PublisherStats>(
      publisherIds.map((id) => [id, { packageCount: 0, totalDownloads: 0 }]),
    );
    if (publisherIds.length === 0) return result;
    const query = this.packages
      .createQueryBuilder('pkg')
      .select('pkg.publisher_id', 'publisherId')
      .addSelect('COUNT(*)', 'packageCount')
      .addSelect('COALESCE(SUM(pkg.total_downloads), 0)', 'totalDownloads')
      .where('pkg.publisher_id IN (:...publisherIds)', { publisherIds })
      .groupBy('pkg.publisher_id');
    const rows = await whereVisible(query, 'pkg', caller, 'read').getRawMany<{
      publisherId: string;
      packageCount: string | number;
      totalDownloads: string | number;
    }>();
    for (const row of rows)
      result.set(row.publisherId, {
        packageCount: Number(row.packageCount),
        totalDownloads: Number(row.totalDownloads),
      });
    return result;
  }
}
