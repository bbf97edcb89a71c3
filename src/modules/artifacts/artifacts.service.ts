import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import semver from 'semver';
import type { Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { REGISTRY_CONFIG } from '../../config/config.module.js';
import type { RegistryConfig } from '../../config/config.js';
import { type Caller, PackagesService, type PublisherSummary, PublishersService } from '../registry/index.js';
import type { ArtifactType } from './artifact-vocabulary.js';
import type { VersionWithBuilds } from './artifacts.views.js';
import { ArtifactBuildEntity } from './entities/artifact-build.entity.js';
import { ArtifactVersionEntity } from './entities/artifact-version.entity.js';
import { ArtifactEntity } from './entities/artifact.entity.js';

export interface ArtifactInput {
  name: string;
  artifactType: ArtifactType;
  description?: string;
  homepage?: string;
  repository?: string;
}

export interface ArtifactListFilter {
  page: number;
  perPage: number;
  artifactType?: ArtifactType;
  publisher?: string;
}

export interface ArtifactWithOwner {
  artifact: ArtifactEntity;
  publisher: PublisherSummary | null;
}

/** Artifact records: create, list, read. Artifacts are public; their files live in ArtifactBuildsService. */
@Injectable()
export class ArtifactsService {
  constructor(
    @InjectRepository(ArtifactEntity) private readonly artifacts: Repository<ArtifactEntity>,
    @InjectRepository(ArtifactVersionEntity) private readonly versions: Repository<ArtifactVersionEntity>,
    @InjectRepository(ArtifactBuildEntity) private readonly builds: Repository<ArtifactBuildEntity>,
    private readonly publishers: PublishersService,
    private readonly packages: PackagesService,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
  ) {}

  async create(caller: Caller, input: ArtifactInput): Promise<ArtifactWithOwner> {
    // Same gate as packages: a publisher, not suspended.
    const publisher = await this.packages.publishingPublisher(caller);
    // Artifacts are always public, so the "public needs verified" rule applies to every one of them.
    if (this.registry.requireVerifiedPublisher && publisher.verificationStatus !== 'verified') {
      throw new PlatformError(
        'FORBIDDEN',
        'Artifacts are public and require a verified publisher on this registry (REGISTRY_REQUIRE_VERIFIED_PUBLISHER)',
      );
    }
    const nameLower = input.name.toLowerCase();
    if (await this.artifacts.exists({ where: { nameLower } }))
      throw new PlatformError('CONFLICT', `Artifact "${input.name}" already exists`);
    const now = new Date();
    const artifact = this.artifacts.create({
      id: randomUUID(),
      name: input.name,
      nameLower,
      artifactType: input.artifactType,
      description: input.description ?? '',
      homepage: input.homepage ?? null,
      repository: input.repository ?? null,
      publisherId: publisher.id,
      latestVersion: null,
      totalDownloads: 0,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.artifacts.insert(artifact);
    } catch (error) {
      // The unique index settles two creates of one name at once.
      if (await this.artifacts.exists({ where: { nameLower } }))
        throw new PlatformError('CONFLICT', `Artifact "${input.name}" already exists`);
      throw error;
    }
    return { artifact, publisher };
  }

  /** Most recently updated first. */
  async list(filter: ArtifactListFilter): Promise<{ items: ArtifactWithOwner[]; total: number }> {
    const query = this.artifacts.createQueryBuilder('artifact');
    if (filter.artifactType)
      query.andWhere('artifact.artifact_type = :artifactType', { artifactType: filter.artifactType });
    const { items, total } = await this.publishers.pageWithPublishers(query, 'artifact', filter);
    return { items: items.map(({ row, publisher }) => ({ artifact: row, publisher })), total };
  }

  /** By name, case-insensitively. */
  async find(name: string): Promise<ArtifactEntity> {
    const artifact = await this.artifacts.findOne({ where: { nameLower: name.toLowerCase() } });
    if (!artifact) throw new PlatformError('NOT_FOUND', `Artifact "${name}" not found`);
    return artifact;
  }

  async detail(
    name: string,
  ): Promise<{ artifact: ArtifactEntity; publisher: PublisherSummary | null; versions: VersionWithBuilds[] }> {
    const artifact = await this.find(name);
    const [publisher, versions] = await Promise.all([
      this.publishers.findById(artifact.publisherId),
      this.versionsOf(artifact.id),
    ]);
    return { artifact, publisher, versions };
  }

  /** Every version with its builds, highest version first; builds by platform then architecture. */
  async versionsOf(artifactId: string): Promise<VersionWithBuilds[]> {
    const [versions, builds] = await Promise.all([
      this.versions.find({ where: { artifactId } }),
      this.builds.find({ where: { artifactId } }),
    ]);
    const byVersion = new Map<string, ArtifactBuildEntity[]>(versions.map((version) => [version.id, []]));
    for (const build of builds) byVersion.get(build.versionId)?.push(build);
    return versions
      .sort((a, b) => semver.rcompare(a.version, b.version))
      .map((version) => ({
        version,
        builds: byVersion
          .get(version.id)!
          .sort((a, b) => a.platform.localeCompare(b.platform) || a.architecture.localeCompare(b.architecture)),
      }));
  }

  async findVersion(artifact: ArtifactEntity, version: string): Promise<VersionWithBuilds> {
    const wanted = semver.valid(version) ?? version;
    const row = await this.versions.findOne({ where: { artifactId: artifact.id, version: wanted } });
    if (!row) throw new PlatformError('NOT_FOUND', `Version ${version} of artifact "${artifact.name}" not found`);
    const builds = await this.builds.find({ where: { versionId: row.id } });
    return { version: row, builds };
  }
}
