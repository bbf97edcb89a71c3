import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import semver from 'semver';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import type { MultipartBody, UploadedFile } from '../../common/multipart-reader.js';
import { jsonDeeperThan } from '../../common/json-depth.js';
import { REGISTRY_CONFIG } from '../../config/config.module.js';
import type { RegistryConfig } from '../../config/config.js';
import { parseRequirement } from '../../packaging/requirement.js';
import { ZipInspector } from '../../packaging/zip-inspector.js';
import type { ByteRange } from '../../storage/object-store.js';
import { StorageService } from '../../storage/storage.service.js';
import { DownloadUrls } from '../../storage/download-urls.js';
import { owns, type Caller } from './caller.js';
import { PackageVersionEntity } from './entities/package-version.entity.js';
import { PackageEntity } from './entities/package.entity.js';
import type { PublisherEntity } from './entities/publisher.entity.js';
import { pickLatestVersion } from './latest-version.js';
import { PackageViewCache } from './package-view-cache.js';
import { PackagesService, type PackageInput } from './packages.service.js';
import { RegistryEvents } from './registry-events.js';
import { packageFileName } from './package-file-name.js';

/** An upload that passed every check and is ready to be committed. */
export interface PreparedVersion {
  version: string;
  changelog: string;
  toolboxVersion: string | null;
  dependencies: string[];
  file: UploadedFile;
}

export interface DownloadTicket {
  url: string;
  expiresIn: number;
  size: number;
  checksumSha256: string;
  filename: string;
  yanked: boolean;
}

const MAX_DEPENDENCIES = 200;

@Injectable()
export class PackageVersionsService {
  private readonly inspector: ZipInspector;

  constructor(
    @InjectRepository(PackageVersionEntity) private readonly versions: Repository<PackageVersionEntity>,
    @InjectRepository(PackageEntity) private readonly packageRows: Repository<PackageEntity>,
    private readonly dataSource: DataSource,
    private readonly packages: PackagesService,
    private readonly storage: StorageService,
    private readonly downloadUrls: DownloadUrls,
    private readonly events: RegistryEvents,
    private readonly viewCache: PackageViewCache,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
  ) {
    this.inspector = new ZipInspector(registry.zipLimits);
  }

  /** Validates the fields and inspects the archive; writes nothing. */
  async prepare(body: MultipartBody, fields: { version?: string; changelog?: string }): Promise<PreparedVersion> {
    const rawVersion = (fields.version ?? body.fields.version ?? '').trim();
    if (!rawVersion)
      throw new PlatformError('UNPROCESSABLE_ENTITY', 'version is required', [
        { field: 'version', message: 'version is required' },
      ]);
    const version = semver.valid(rawVersion);
    if (!version || rawVersion.length > 100) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `version "${rawVersion}" is not a valid semantic version (e.g. 1.2.3)`,
        [{ field: 'version', message: 'must be a semantic version' }],
      );
    }
    const toolboxVersion = body.fields.toolbox_version?.trim() || null;
    if (toolboxVersion && (toolboxVersion.length > 200 || semver.validRange(toolboxVersion) === null)) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `toolbox_version "${toolboxVersion}" is not a valid semver range`,
        [{ field: 'toolbox_version', message: 'must be a semver range such as >=1.2.0 <2' }],
      );
    }
    if (toolboxVersion && semver.minVersion(toolboxVersion) === null) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `toolbox_version "${toolboxVersion}" is a range no version can satisfy`,
        [{ field: 'toolbox_version', message: 'no version satisfies this range' }],
      );
    }
    const dependencies = parseDependencies(body.fields.dependencies);
    const changelog = fields.changelog ?? body.fields.changelog ?? '';
    if (changelog.length > 100_000)
      throw new PlatformError('UNPROCESSABLE_ENTITY', 'changelog is longer than 100000 characters');
    if (!body.file)
      throw new PlatformError('UNPROCESSABLE_ENTITY', 'file is required', [
        { field: 'file', message: 'attach the ZIP as "file"' },
      ]);
    if (body.file.size === 0) throw new PlatformError('ZIP_REJECTED', 'The uploaded file is empty, not a ZIP archive');
    const inspection = await this.inspector.inspect(body.file.path);
    if (inspection.fileCount === 0)
      throw new PlatformError('ZIP_REJECTED', 'The uploaded ZIP archive contains no files', [
        { field: 'file', message: 'the archive is empty' },
      ]);
    return { version, changelog, toolboxVersion, dependencies, file: body.file };
  }

  /** Upload a version to an existing package (both upload routes land here). */
  async upload(
    caller: Caller,
    name: string,
    body: MultipartBody,
  ): Promise<{ pkg: PackageEntity; version: PackageVersionEntity }> {
    const pkg = await this.assertMayUpload(caller, name);
    const prepared = await this.prepare(body, {});
    await this.assertVersionFree(pkg, prepared.version);
    const version = await this.commit(prepared, pkg, async (manager, storageKey) =>
      this.insertVersion(manager, pkg, prepared, storageKey),
    );
    return { pkg: (await this.packages.findById(pkg.id)) ?? pkg, version };
  }

  /**
   * What can be checked before the body is read (package, ownership, an active publisher, and the version
   * when the client names it in the query): a refused upload never stages a byte.
   */
  async assertMayUpload(caller: Caller, name: string, version?: string): Promise<PackageEntity> {
    const pkg = await this.packages.findReadable(caller, name);
    if (!owns(caller, pkg))
      throw new PlatformError('FORBIDDEN', `Only the publisher of "${pkg.name}" may upload versions`);
    await this.packages.publishingPublisher(caller);
    await this.assertVersionNotTaken(pkg, version);
    return pkg;
  }

  /** A 409 for a version number (as the client sent it) that the package already has; anything else passes here. */
  async assertVersionNotTaken(pkg: PackageEntity, rawVersion: string | undefined): Promise<void> {
    const valid = rawVersion ? semver.valid(rawVersion.trim()) : null;
    if (valid) await this.assertVersionFree(pkg, valid);
  }

  /** Multipart package creation with a first version: both rows or neither. */
  async createWithFirstVersion(
    caller: Caller,
    input: PackageInput,
    body: MultipartBody,
    fields: { version?: string; changelog?: string },
  ) {
    const publisher: PublisherEntity = await this.packages.prepareCreate(caller, input);
    const prepared = await this.prepare(body, fields);
    let pkg!: PackageEntity;
    const version = await this.commit(prepared, null, async (manager, storageKey) => {
      pkg = await this.packages.insert(manager, publisher, input);
      return this.insertVersion(manager, pkg, prepared, storageKey);
    });
    await this.events.emit('packageChanged', { packageId: pkg.id });
    return { pkg: (await this.packages.findById(pkg.id)) ?? pkg, publisher, version };
  }

  private async assertVersionFree(pkg: PackageEntity, version: string): Promise<void> {
    if (await this.versions.exists({ where: { packageId: pkg.id, version } })) {
      throw new PlatformError('CONFLICT', `Version ${version} of "${pkg.name}" already exists`);
    }
  }

  /** Object first, then the rows in one transaction; if the rows fail, the object is removed again. */
  private async commit(
    prepared: PreparedVersion,
    existing: PackageEntity | null,
    write: (manager: EntityManager, storageKey: string) => Promise<PackageVersionEntity>,
  ): Promise<PackageVersionEntity> {
    const storageKey = `packages/${randomUUID()}/${prepared.version}-${prepared.file.sha256.slice(0, 12)}.zip`;
    await this.storage.putFile(storageKey, prepared.file.path, 'application/zip');
    let version: PackageVersionEntity;
    try {
      version = await this.dataSource.transaction((manager) => write(manager, storageKey));
    } catch (error) {
      await this.storage.deleteNow(storageKey);
      if (existing && (await this.versions.exists({ where: { packageId: existing.id, version: prepared.version } }))) {
        throw new PlatformError('CONFLICT', `Version ${prepared.version} of "${existing.name}" already exists`);
      }
      throw error;
    }
    const pkg = await this.packages.findById(version.packageId);
    await this.events.emit('versionUploaded', {
      packageId: version.packageId,
      packageName: pkg?.name ?? '',
      version: version.version,
    });
    return version;
  }

  private async insertVersion(
    manager: EntityManager,
    pkg: PackageEntity,
    prepared: PreparedVersion,
    storageKey: string,
  ): Promise<PackageVersionEntity> {
    const version = manager.create(PackageVersionEntity, {
      id: randomUUID(),
      packageId: pkg.id,
      version: prepared.version,
      changelog: prepared.changelog,
      toolboxVersion: prepared.toolboxVersion,
      dependencies: prepared.dependencies,
      sizeBytes: prepared.file.size,
      checksumSha256: prepared.file.sha256,
      storageKey,
      yanked: false,
      yankReason: null,
      downloads: 0,
      publishedAt: new Date(),
    });
    await manager.insert(PackageVersionEntity, version);
    await this.refreshLatest(manager, pkg.id);
    return version;
  }

  private async refreshLatest(manager: EntityManager, packageId: string): Promise<void> {
    const rows = await manager.find(PackageVersionEntity, {
      where: { packageId },
      select: { version: true, yanked: true },
    });
    await manager.update(
      PackageEntity,
      { id: packageId },
      { latestVersion: pickLatestVersion(rows), updatedAt: new Date() },
    );
  }

  async findVersion(
    caller: Caller,
    name: string,
    version: string,
  ): Promise<{ pkg: PackageEntity; version: PackageVersionEntity }> {
    const pkg = await this.packages.findReadable(caller, name);
    const row = await this.versions.findOne({
      where: { packageId: pkg.id, version: semver.valid(version) ?? version },
    });
    if (!row) throw new PlatformError('NOT_FOUND', `Version ${version} of "${pkg.name}" not found`);
    return { pkg, version: row };
  }

  async setYanked(
    caller: Caller,
    name: string,
    version: string,
    yanked: boolean,
    reason?: string,
  ): Promise<PackageVersionEntity> {
    const pkg = await this.packages.findWritable(caller, name);
    const { version: row } = await this.findVersion(caller, pkg.name, version);
    const changes = { yanked, yankReason: yanked ? reason?.trim() || null : null };
    await this.dataSource.transaction(async (manager) => {
      await manager.update(PackageVersionEntity, { id: row.id }, changes);
      await this.refreshLatest(manager, pkg.id);
    });
    await this.events.emit('packageChanged', { packageId: pkg.id });
    return { ...row, ...changes };
  }

  /** A signed, time-limited URL served by the registry itself (GET /api/v1/files/…). */
  async downloadTicket(caller: Caller, name: string, version: string, baseUrl: string): Promise<DownloadTicket> {
    const { pkg, version: row } = await this.findVersion(caller, name, version);
    return {
      url: this.signedUrl(row.storageKey, baseUrl, pkg.visibility),
      expiresIn: this.downloadUrls.ttlSeconds,
      size: row.sizeBytes,
      checksumSha256: row.checksumSha256,
      filename: packageFileName(pkg, row),
      yanked: row.yanked,
    };
  }

  /** Bound to the package's visibility at issue time: a public package's URL dies when it turns private. */
  signedUrl(storageKey: string, baseUrl: string, visibility?: string): string {
    return this.downloadUrls.signedUrl(storageKey, baseUrl, visibility);
  }

  open(row: PackageVersionEntity, range?: ByteRange): Promise<Readable> {
    return this.storage.get(row.storageKey, range);
  }

  /** The current visibility of the package owning a stored version, null when none does (any more). */
  async visibilityOf(storageKey: string): Promise<string | null> {
    const row = await this.versions.findOne({ where: { storageKey }, select: { id: true, packageId: true } });
    if (!row) return null;
    const pkg = await this.packageRows.findOne({
      where: { id: row.packageId },
      select: { id: true, visibility: true },
    });
    return pkg?.visibility ?? null;
  }

  /** Counts a served file on the version, its package (and so its publisher). */
  async countDownload(storageKey: string): Promise<boolean> {
    const row = await this.versions.findOne({ where: { storageKey }, select: { id: true, packageId: true } });
    if (!row) return false;
    await this.versions.increment({ id: row.id }, 'downloads', 1);
    await this.packageRows.increment({ id: row.packageId }, 'totalDownloads', 1);
    await this.viewCache.invalidate(row.packageId);
    // Only when someone listens (search keeps its popularity boost in step): the read costs a query per download.
    if (this.events.hasListeners('downloadCounted')) {
      const counted = await this.packageRows.findOne({
        where: { id: row.packageId },
        select: { id: true, totalDownloads: true },
      });
      if (counted)
        await this.events.emit('downloadCounted', {
          packageId: row.packageId,
          totalDownloads: Number(counted.totalDownloads),
        });
    }
    return true;
  }
}

/** `dependencies`: a JSON array of requirement strings (`lib>=1.2.0`) or `{name, version}` objects. */
export function parseDependencies(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new PlatformError('UNPROCESSABLE_ENTITY', 'dependencies must be a JSON array', [
      { field: 'dependencies', message: 'must be a JSON array' },
    ]);
  }
  if (!Array.isArray(parsed) || jsonDeeperThan(parsed, 2)) {
    throw new PlatformError('UNPROCESSABLE_ENTITY', 'dependencies must be a JSON array', [
      { field: 'dependencies', message: 'must be a JSON array' },
    ]);
  }
  if (parsed.length > MAX_DEPENDENCIES)
    throw new PlatformError('UNPROCESSABLE_ENTITY', `at most ${MAX_DEPENDENCIES} dependencies`);
  return parsed.map((item) => {
    if (
      typeof item !== 'string' &&
      (typeof item !== 'object' || item === null || typeof (item as { name?: unknown }).name !== 'string')
    ) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `Invalid dependency ${JSON.stringify(item)}: expected "name>=1.0.0" or {name, version}`,
      );
    }
    try {
      const requirement = parseRequirement(item as string | { name: string; version?: string });
      return requirement.writtenRange ? `${requirement.name}${glue(requirement.writtenRange)}` : requirement.name;
    } catch (error) {
      throw new PlatformError('UNPROCESSABLE_ENTITY', (error as Error).message, [
        { field: 'dependencies', message: (error as Error).message },
      ]);
    }
  });
}

/** `lib>=1.2`, `lib^1.2`, but `lib 1.0.0 - 2.0.0` keeps a space so it parses back the same way. */
function glue(range: string): string {
  return /^[\^~<>=!*]/.test(range) ? range : ` ${range}`;
}
