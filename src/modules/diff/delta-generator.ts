import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { StorageService } from '../../storage/storage.service.js';
import { PackagesService, type PackageVersionEntity, PackageVersionsService } from '../registry/index.js';
import { createDelta } from './delta/create-delta.js';
import type { DeltaSummary } from './delta/delta-format.js';
import { PackageDeltaEntity } from './entities/package-delta.entity.js';
import type { GenerateDeltaPayload } from './jobs/generate-delta.job.js';

interface InFlight {
  force: boolean;
  promise: Promise<PackageDeltaEntity | null>;
}

/** Object keys allow `[A-Za-z0-9._-]`; semver build metadata (`+`) and anything else become `_`. */
function keySegment(version: string): string {
  return version.replace(/[^A-Za-z0-9._-]/g, '_');
}

export function deltaStorageKey(
  packageId: string,
  fromVersion: string,
  toVersion: string,
  patchSha256: string,
): string {
  return `deltas/${packageId}/${keySegment(fromVersion)}-${keySegment(toVersion)}-${patchSha256.slice(0, 12)}.tbdelta`;
}

/**
 * Builds one delta: both version files are streamed from storage into a temporary directory, the
 * delta core writes the patch, the patch goes to storage (primary, then mirrors through jobs) and the
 * row is upserted. Within a process, concurrent requests for the same pair share one build, so an
 * inline request and a queued job never do the work twice; across processes the queue's job id does.
 */
@Injectable()
export class DeltaGenerator {
  private readonly logger = new Logger('DeltaGenerator');
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    @InjectRepository(PackageDeltaEntity) private readonly deltas: Repository<PackageDeltaEntity>,
    private readonly packages: PackagesService,
    private readonly versions: PackageVersionsService,
    private readonly storage: StorageService,
  ) {}

  /**
   * The ready delta for the pair, built now unless one exists (or `force`). Null when the package or
   * either version no longer exists (deleted while the job waited): there is nothing to build.
   */
  generate(request: GenerateDeltaPayload): Promise<PackageDeltaEntity | null> {
    const key = `${request.fromVersionId}:${request.toVersionId}`;
    const current = this.inFlight.get(key);
    // A forced rebuild must not be satisfied by a run that may just return the existing delta.
    if (current && (current.force || !request.force)) return current.promise;
    const previous = current ? current.promise.catch(() => null) : Promise.resolve(null);
    const promise = previous
      .then(() => this.build(request))
      .finally(() => {
        if (this.inFlight.get(key)?.promise === promise) this.inFlight.delete(key);
      });
    this.inFlight.set(key, { force: request.force, promise });
    return promise;
  }

  private async build(request: GenerateDeltaPayload): Promise<PackageDeltaEntity | null> {
    const pair = await this.loadPair(request);
    if (!pair) return null;
    if (!request.force) {
      const existing = await this.findRow(request);
      if (
        existing?.status === 'ready' &&
        existing.patchStoragePath &&
        (await this.storage.stat(existing.patchStoragePath))
      )
        return existing;
    }
    const directory = await mkdtemp(join(tmpdir(), 'tb-delta-'));
    try {
      const oldPath = join(directory, 'old.zip');
      const newPath = join(directory, 'new.zip');
      const patchPath = join(directory, 'patch.tbdelta');
      await this.download(pair.from, oldPath);
      await this.download(pair.to, newPath);
      const started = Date.now();
      const summary = await createDelta(oldPath, newPath, patchPath);
      if (summary.targetSha256 !== pair.to.checksumSha256)
        throw new Error(`stored file of ${pair.to.version} changed while the delta was built`);
      const key = deltaStorageKey(request.packageId, pair.from.version, pair.to.version, summary.patchSha256);
      await this.storage.putFile(key, patchPath, 'application/octet-stream');
      this.logger.log(
        `Delta ${pair.from.version} → ${pair.to.version} of package ${request.packageId}: ${summary.patchSize} of ${summary.fullSize} bytes in ${Date.now() - started} ms`,
      );
      const row = await this.saveReady(request, pair, summary, key);
      // The package or a version may have been removed while we worked; its removal listener ran already.
      if (!(await this.loadPair(request))) {
        await this.deltas.delete({ id: row.id });
        await this.storage.delete(key);
        return null;
      }
      return row;
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }

  /** Records the reason of a generation that gave up, so repeated requests do not rebuild in a loop. */
  async markFailed(request: GenerateDeltaPayload, reason: string): Promise<void> {
    await this.deltas.update(
      {
        packageId: request.packageId,
        fromVersionId: request.fromVersionId,
        toVersionId: request.toVersionId,
        status: 'pending',
      },
      { status: 'failed', error: reason.slice(0, 2000), updatedAt: new Date() },
    );
  }

  /** Notes a failed try on a row that stays pending while the queue retries. */
  async noteError(request: GenerateDeltaPayload, reason: string): Promise<void> {
    await this.deltas.update(
      {
        packageId: request.packageId,
        fromVersionId: request.fromVersionId,
        toVersionId: request.toVersionId,
        status: 'pending',
      },
      { error: reason.slice(0, 2000), updatedAt: new Date() },
    );
  }

  private findRow(
    request: Pick<GenerateDeltaPayload, 'packageId' | 'fromVersionId' | 'toVersionId'>,
  ): Promise<PackageDeltaEntity | null> {
    return this.deltas.findOne({
      where: { packageId: request.packageId, fromVersionId: request.fromVersionId, toVersionId: request.toVersionId },
    });
  }

  private async loadPair(
    request: GenerateDeltaPayload,
  ): Promise<{ from: PackageVersionEntity; to: PackageVersionEntity } | null> {
    const pkg = await this.packages.findById(request.packageId);
    if (!pkg) return null;
    const rows = await this.packages.versionsOf(pkg.id);
    const from = rows.find((row) => row.id === request.fromVersionId);
    const to = rows.find((row) => row.id === request.toVersionId);
    return from && to ? { from, to } : null;
  }

  /** Streams a version's file to disk, checking it against the checksum recorded at upload. */
  private async download(version: PackageVersionEntity, path: string): Promise<void> {
    const hash = createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    const source: Readable = await this.versions.open(version);
    await pipeline(source, tap, createWriteStream(path));
    const digest = hash.digest('hex');
    if (digest !== version.checksumSha256)
      throw new Error(`stored file of version ${version.version} does not match its checksum`);
  }

  private async saveReady(
    request: GenerateDeltaPayload,
    pair: { from: PackageVersionEntity; to: PackageVersionEntity },
    summary: DeltaSummary,
    key: string,
  ): Promise<PackageDeltaEntity> {
    const now = new Date();
    const fields = {
      fromVersion: pair.from.version,
      toVersion: pair.to.version,
      status: 'ready' as const,
      format: summary.format,
      patchSize: summary.patchSize,
      fullSize: summary.fullSize,
      changedFiles: summary.changedFiles,
      addedFiles: summary.addedFiles,
      deletedFiles: summary.deletedFiles,
      keptFiles: summary.keptFiles,
      exactRebuild: summary.exactRebuild,
      patchStoragePath: key,
      patchChecksum: summary.patchSha256,
      error: null,
      createdAt: now,
      updatedAt: now,
    };
    let existing = await this.findRow(request);
    if (!existing) {
      const row = this.deltas.create({
        id: randomUUID(),
        packageId: request.packageId,
        fromVersionId: request.fromVersionId,
        toVersionId: request.toVersionId,
        ...fields,
      });
      try {
        await this.deltas.insert(row);
        return row;
      } catch (error) {
        // Another writer inserted the pair first: update its row instead.
        existing = await this.findRow(request);
        if (!existing) throw error;
      }
    }
    await this.deltas.update({ id: existing.id }, fields);
    // A rebuild writes a new key (the hash is in the name); the replaced patch is removed from every store.
    if (existing.patchStoragePath && existing.patchStoragePath !== key)
      await this.storage.delete(existing.patchStoragePath);
    return { ...existing, ...fields };
  }
}
