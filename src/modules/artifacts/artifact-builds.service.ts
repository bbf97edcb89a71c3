import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import semver from 'semver';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import { PlatformError, type FieldError } from '../../common/errors.js';
import type { MultipartBody, UploadedFile } from '../../common/multipart-reader.js';
import type { ByteRange } from '../../storage/object-store.js';
import { StorageService } from '../../storage/storage.service.js';
import { DownloadUrls } from '../../storage/download-urls.js';
import { type Caller, owns, PackagesService } from '../registry/index.js';
import {
  ARCHITECTURES,
  isArchitecture,
  isPlatform,
  PLATFORMS,
  type Architecture,
  type Platform,
} from './artifact-vocabulary.js';
import { ArtifactsService } from './artifacts.service.js';
import type { VersionWithBuilds } from './artifacts.views.js';
import { ArtifactBuildEntity } from './entities/artifact-build.entity.js';
import { ArtifactVersionEntity } from './entities/artifact-version.entity.js';
import { ArtifactEntity } from './entities/artifact.entity.js';
import { keySegment, safeFilename } from './build-filename.js';
import { selectBuild, selectLatestBuild, type BuildChoice, type BuildRequest } from './select-build.js';

/** A build upload whose fields passed every check, ready to be committed. */
export interface PreparedBuild {
  version: string;
  platform: Platform;
  architecture: Architecture;
  changelog: string | null;
  installerType: string | null;
  minOsVersion: string | null;
  filename: string;
  file: UploadedFile;
}

export interface BuildLocation {
  artifact: ArtifactEntity;
  version: ArtifactVersionEntity;
  build: ArtifactBuildEntity;
}

const MAX_CHANGELOG_LENGTH = 100_000;

/** Build files: upload (streamed, hashed, capped), pick the right build, sign URLs, serve and count. */
@Injectable()
export class ArtifactBuildsService {
  constructor(
    @InjectRepository(ArtifactBuildEntity) private readonly builds: Repository<ArtifactBuildEntity>,
    @InjectRepository(ArtifactEntity) private readonly artifactRows: Repository<ArtifactEntity>,
    private readonly dataSource: DataSource,
    private readonly artifacts: ArtifactsService,
    private readonly packages: PackagesService,
    private readonly storage: StorageService,
    private readonly downloadUrls: DownloadUrls,
  ) {}

  /**
   * Who may upload, checked before the body is read: the artifact's own publisher, not suspended.
   * (Admins manage publishers; they do not publish in a publisher's name.)
   */
  async assertMayUpload(caller: Caller, name: string): Promise<ArtifactEntity> {
    const artifact = await this.artifacts.find(name);
    await this.packages.publishingPublisher(caller);
    if (!owns(caller, artifact))
      throw new PlatformError('FORBIDDEN', `Only the publisher of artifact "${artifact.name}" may upload builds`);
    return artifact;
  }

  /** Validates the multipart fields; writes nothing. */
  prepare(artifact: ArtifactEntity, body: MultipartBody): PreparedBuild {
    const fields = body.fields;
    const problems: FieldError[] = [];
    const rawVersion = (fields.version ?? '').trim();
    const version = rawVersion.length <= 100 ? semver.valid(rawVersion) : null;
    if (!rawVersion) problems.push({ field: 'version', message: 'version is required' });
    else if (!version)
      problems.push({ field: 'version', message: `"${rawVersion}" is not a semantic version (e.g. 1.2.3)` });
    const platform = (fields.platform ?? '').trim().toLowerCase() || 'all';
    if (!isPlatform(platform)) problems.push({ field: 'platform', message: `must be one of: ${PLATFORMS.join(', ')}` });
    const architecture = (fields.architecture ?? '').trim().toLowerCase() || 'all';
    if (!isArchitecture(architecture))
      problems.push({ field: 'architecture', message: `must be one of: ${ARCHITECTURES.join(', ')}` });
    const changelog = fields.changelog ?? '';
    if (changelog.length > MAX_CHANGELOG_LENGTH)
      problems.push({ field: 'changelog', message: `at most ${MAX_CHANGELOG_LENGTH} characters` });
    const installerType = fields.installer_type?.trim() || null;
    if (installerType && installerType.length > 50)
      problems.push({ field: 'installer_type', message: 'at most 50 characters' });
    const minOsVersion = fields.min_os_version?.trim() || null;
    if (minOsVersion && minOsVersion.length > 50)
      problems.push({ field: 'min_os_version', message: 'at most 50 characters' });
    if (!body.file) problems.push({ field: 'file', message: 'attach the build as "file"' });
    else if (body.file.size === 0) problems.push({ field: 'file', message: 'the uploaded file is empty' });
    if (problems.length) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `Validation failed: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
        problems,
      );
    }
    const target = { version: version!, platform: platform as Platform, architecture: architecture as Architecture };
    return {
      ...target,
      changelog: changelog || null,
      installerType,
      minOsVersion,
      filename:
        safeFilename(body.file!.filename) ??
        `${artifact.name}-${target.version}-${target.platform}-${target.architecture}`,
      file: body.file!,
    };
  }

  /** Object first, then the rows in one transaction; on any failure the object is removed again. */
  async upload(
    caller: Caller,
    artifact: ArtifactEntity,
    body: MultipartBody,
  ): Promise<{ artifact: ArtifactEntity; version: VersionWithBuilds; build: ArtifactBuildEntity }> {
    const prepared = this.prepare(artifact, body);
    // Refused before anything is stored; the unique index catches a race past this check.
    if (await this.buildExists(artifact, prepared)) throw duplicateBuild(artifact, prepared);
    const storageKey = [
      'artifacts',
      artifact.id,
      keySegment(prepared.version),
      `${prepared.platform}-${prepared.architecture}-${prepared.file.sha256.slice(0, 12)}`,
      prepared.filename,
    ].join('/');
    await this.storage.putFile(storageKey, prepared.file.path, 'application/octet-stream');
    let build: ArtifactBuildEntity;
    try {
      build = await this.insertWithRetry(artifact, prepared, storageKey);
    } catch (error) {
      await this.storage.deleteNow(storageKey);
      if (await this.buildExists(artifact, prepared)) throw duplicateBuild(artifact, prepared);
      throw error;
    }
    const version = await this.artifacts.findVersion(artifact, prepared.version);
    return { artifact: (await this.artifactRows.findOne({ where: { id: artifact.id } })) ?? artifact, version, build };
  }

  /** Two first builds of one version at once both try to create the version row; the loser retries once. */
  private async insertWithRetry(
    artifact: ArtifactEntity,
    prepared: PreparedBuild,
    storageKey: string,
  ): Promise<ArtifactBuildEntity> {
    try {
      return await this.dataSource.transaction((manager) => this.insertBuild(manager, artifact, prepared, storageKey));
    } catch (error) {
      if (await this.buildExists(artifact, prepared)) throw error;
      return this.dataSource.transaction((manager) => this.insertBuild(manager, artifact, prepared, storageKey));
    }
  }

  private async insertBuild(
    manager: EntityManager,
    artifact: ArtifactEntity,
    prepared: PreparedBuild,
    storageKey: string,
  ): Promise<ArtifactBuildEntity> {
    const now = new Date();
    let version = await manager.findOne(ArtifactVersionEntity, {
      where: { artifactId: artifact.id, version: prepared.version },
    });
    if (!version) {
      version = manager.create(ArtifactVersionEntity, {
        id: randomUUID(),
        artifactId: artifact.id,
        version: prepared.version,
        changelog: prepared.changelog,
        minOsVersion: prepared.minOsVersion,
        releasedAt: now,
      });
      await manager.insert(ArtifactVersionEntity, version);
    } else if ((!version.changelog && prepared.changelog) || (!version.minOsVersion && prepared.minOsVersion)) {
      // A version's notes come from its first build; a later build may only fill what is still empty.
      await manager.update(
        ArtifactVersionEntity,
        { id: version.id },
        {
          changelog: version.changelog || prepared.changelog,
          minOsVersion: version.minOsVersion || prepared.minOsVersion,
        },
      );
    }
    const build = manager.create(ArtifactBuildEntity, {
      id: randomUUID(),
      artifactId: artifact.id,
      versionId: version.id,
      platform: prepared.platform,
      architecture: prepared.architecture,
      filename: prepared.filename,
      sizeBytes: prepared.file.size,
      checksumSha256: prepared.file.sha256,
      installerType: prepared.installerType,
      storageKey,
      downloads: 0,
      createdAt: now,
    });
    await manager.insert(ArtifactBuildEntity, build);
    const current = await manager.findOne(ArtifactEntity, {
      where: { id: artifact.id },
      select: { id: true, latestVersion: true },
    });
    const latest =
      current?.latestVersion && semver.gte(current.latestVersion, prepared.version)
        ? current.latestVersion
        : prepared.version;
    await manager.update(ArtifactEntity, { id: artifact.id }, { latestVersion: latest, updatedAt: now });
    return build;
  }

  private async buildExists(
    artifact: ArtifactEntity,
    target: { version: string; platform: Platform; architecture: Architecture },
  ): Promise<boolean> {
    return this.builds
      .createQueryBuilder('build')
      .innerJoin(ArtifactVersionEntity, 'version', 'version.id = build.version_id')
      .where('build.artifact_id = :artifactId', { artifactId: artifact.id })
      .andWhere('version.version = :version', { version: target.version })
      .andWhere('build.platform = :platform', { platform: target.platform })
      .andWhere('build.architecture = :architecture', { architecture: target.architecture })
      .getExists();
  }

  /** The highest version with a build for the platform and architecture (exact preferred over `all`). */
  async latest(name: string, request: BuildRequest): Promise<BuildLocation> {
    const artifact = await this.artifacts.find(name);
    const versions = await this.artifacts.versionsOf(artifact.id);
    const found = selectLatestBuild(versions, (entry) => entry.builds, request);
    if (!found)
      throw new PlatformError('NOT_FOUND', `Artifact "${artifact.name}" has no build for ${describeRequest(request)}`);
    return {
      artifact,
      version: found.version.version,
      build: unambiguous(artifact, found.version.version.version, found.choice, request),
    };
  }

  /** One build of a version; platform and architecture may be left out when the choice is clear. */
  async find(name: string, version: string, request: BuildRequest): Promise<BuildLocation> {
    const artifact = await this.artifacts.find(name);
    const entry = await this.artifacts.findVersion(artifact, version);
    const choice = selectBuild(entry.builds, request);
    if (choice.kind === 'none') {
      throw new PlatformError(
        'NOT_FOUND',
        `Version ${entry.version.version} of artifact "${artifact.name}" has no build for ${describeRequest(request)}`,
      );
    }
    return { artifact, version: entry.version, build: unambiguous(artifact, entry.version.version, choice, request) };
  }

  /** A signed, time-limited URL served by the registry itself (GET /api/v1/files/…), as for packages. */
  signedUrl(storageKey: string, baseUrl: string): string {
    return this.downloadUrls.signedUrl(storageKey, baseUrl);
  }

  get signedUrlTtlSeconds(): number {
    return this.downloadUrls.ttlSeconds;
  }

  open(build: ArtifactBuildEntity, range?: ByteRange): Promise<Readable> {
    return this.storage.get(build.storageKey, range);
  }

  /** Counts a served file on the build and its artifact. */
  async countDownload(storageKey: string): Promise<boolean> {
    const build = await this.builds.findOne({ where: { storageKey }, select: { id: true, artifactId: true } });
    if (!build) return false;
    await this.builds.increment({ id: build.id }, 'downloads', 1);
    await this.artifactRows.increment({ id: build.artifactId }, 'totalDownloads', 1);
    return true;
  }
}

function unambiguous(
  artifact: ArtifactEntity,
  version: string,
  choice: Exclude<BuildChoice<ArtifactBuildEntity>, { kind: 'none' }>,
  request: BuildRequest,
): ArtifactBuildEntity {
  if (choice.kind === 'found') return choice.build;
  const options = choice.candidates.map((build) => `${build.platform}/${build.architecture}`).join(', ');
  throw new PlatformError(
    'BAD_REQUEST',
    `Version ${version} of artifact "${artifact.name}" has several builds for ${describeRequest(request)} (${options}); choose one with platform and architecture`,
  );
}

function describeRequest(request: BuildRequest): string {
  const platform = request.platform ? `platform ${request.platform}` : 'any platform';
  return request.architecture ? `${platform}, architecture ${request.architecture}` : platform;
}

function duplicateBuild(
  artifact: ArtifactEntity,
  target: { version: string; platform: Platform; architecture: Architecture },
): PlatformError {
  return new PlatformError(
    'CONFLICT',
    `Version ${target.version} of artifact "${artifact.name}" already has a build for ${target.platform}/${target.architecture}`,
  );
}
