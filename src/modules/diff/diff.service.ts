import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import semver from 'semver';
import { In, type Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { REGISTRY_CONFIG } from '../../config/config.module.js';
import type { RegistryConfig } from '../../config/config.js';
import { JOB_QUEUE, type JobQueue } from '../../queue/job-queue.js';
import type { ByteRange } from '../../storage/object-store.js';
import { StorageService } from '../../storage/storage.service.js';
import {
  type Caller,
  type PackageEntity,
  PackagesService,
  type PackageVersionEntity,
  RegistryEvents,
} from '../registry/index.js';
import { DeltaGenerator } from './delta-generator.js';
import { PackageDeltaEntity } from './entities/package-delta.entity.js';
import {
  GENERATE_DELTA_ATTEMPTS,
  GENERATE_DELTA_JOB,
  generateDeltaJobId,
  type GenerateDeltaPayload,
} from './jobs/generate-delta.job.js';
import { pregenerationSources } from './pregeneration-sources.js';

/** After a generation gave up, GET diff info answers 503 for this long instead of rebuilding in a loop; POST create re-queues at once. */
export const FAILED_RETRY_AFTER_MS = 15 * 60_000;

export type DiffOutcome =
  | { state: 'ready'; pkg: PackageEntity; delta: PackageDeltaEntity }
  | { state: 'pending'; pkg: PackageEntity; fromVersion: string; toVersion: string; jobId: string };

export interface CreateDiffRequest {
  fromVersion: string;
  toVersion: string;
  force: boolean;
}

interface VersionPair {
  from: PackageVersionEntity;
  to: PackageVersionEntity;
}

/**
 * The registry's incremental updates: deltas between two versions of a package (docs/delta-format.md).
 * Small pairs are built within the request; large ones, uploads' pre-generation and explicit creation
 * go through the job queue. Visibility follows downloads: whoever cannot read the package gets a 404.
 */
@Injectable()
export class DiffService implements OnModuleInit {
  private readonly logger = new Logger('Diff');

  constructor(
    @InjectRepository(PackageDeltaEntity) private readonly deltas: Repository<PackageDeltaEntity>,
    private readonly packages: PackagesService,
    private readonly generator: DeltaGenerator,
    private readonly storage: StorageService,
    private readonly events: RegistryEvents,
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
  ) {}

  onModuleInit(): void {
    // One build at a time per process: delta creation is CPU-bound (zstd level 10 over whole entries).
    this.queue.process<GenerateDeltaPayload>(GENERATE_DELTA_JOB, (payload, job) => this.runJob(payload, job.attempt), {
      concurrency: 1,
    });
    this.events.onVersionUploaded(({ packageId, version }) => this.pregenerate(packageId, version));
    this.events.onPackageDeleted(({ packageId }) => this.removeDeltas(packageId));
    this.events.onVersionRemoved(({ packageId, version }) => this.removeDeltas(packageId, version));
  }

  /** Diff info: the ready delta, built now when both files are small enough, otherwise queued. */
  async info(caller: Caller, name: string, from: string, to: string): Promise<DiffOutcome> {
    const pkg = await this.packages.findReadable(caller, name);
    const pair = await this.resolvePair(pkg, from, to);
    const row = await this.findRow(pkg.id, pair);
    if (row?.status === 'ready') return { state: 'ready', pkg, delta: row };
    if (row?.status === 'failed' && Date.now() - row.updatedAt.getTime() < FAILED_RETRY_AFTER_MS) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `Building the delta from ${pair.from.version} to ${pair.to.version} failed (${row.error ?? 'unknown error'}); download the full version`,
      );
    }
    const inlineLimit = this.registry.deltaInlineMaxBytes;
    if (pair.from.sizeBytes <= inlineLimit && pair.to.sizeBytes <= inlineLimit) {
      try {
        const delta = await this.generator.generate(this.payloadOf(pkg.id, pair, false));
        if (!delta)
          throw new PlatformError(
            'NOT_FOUND',
            `Version ${pair.from.version} or ${pair.to.version} of "${pkg.name}" no longer exists`,
          );
        return { state: 'ready', pkg, delta };
      } catch (error) {
        if (error instanceof PlatformError && error.code === 'NOT_FOUND') throw error;
        // A transient storage or database failure: the queue retries with back-off instead of failing the client.
        this.logger.warn(
          `Building delta ${pair.from.version} → ${pair.to.version} of "${pkg.name}" inline failed, queued: ${(error as Error).message}`,
        );
      }
    }
    return this.pending(pkg, pair, false);
  }

  /** The ready delta behind the download route; 404 while it does not exist. */
  async findReady(
    caller: Caller,
    name: string,
    from: string,
    to: string,
  ): Promise<{ pkg: PackageEntity; delta: PackageDeltaEntity }> {
    const pkg = await this.packages.findReadable(caller, name);
    const pair = await this.resolvePair(pkg, from, to);
    const row = await this.findRow(pkg.id, pair);
    if (row?.status !== 'ready' || !row.patchStoragePath) {
      throw new PlatformError(
        'NOT_FOUND',
        `The delta from ${pair.from.version} to ${pair.to.version} of "${pkg.name}" does not exist yet (GET /api/v1/packages/${pkg.name}/diff/${pair.from.version}/${pair.to.version} creates it)`,
      );
    }
    return { pkg, delta: row };
  }

  open(delta: PackageDeltaEntity, range?: ByteRange): Promise<Readable> {
    return this.storage.get(delta.patchStoragePath as string, range);
  }

  /** Explicit (pre-)generation by the package's publisher or an admin. */
  async create(caller: Caller, name: string, request: CreateDiffRequest): Promise<DiffOutcome> {
    const pkg = await this.packages.findWritable(caller, name);
    const pair = await this.resolvePair(pkg, request.fromVersion, request.toVersion);
    const row = await this.findRow(pkg.id, pair);
    if (row?.status === 'ready' && !request.force) return { state: 'ready', pkg, delta: row };
    return this.pending(pkg, pair, request.force);
  }

  /**
   * Both versions of the package, checked in the order a client can act on: identical (400), unknown
   * (404), reversed (400). Yanked versions are allowed here: an explicit request names them exactly.
   */
  private async resolvePair(pkg: PackageEntity, from: string, to: string): Promise<VersionPair> {
    const fromVersion = semver.valid(from) ?? from;
    const toVersion = semver.valid(to) ?? to;
    if (fromVersion === toVersion)
      throw new PlatformError(
        'BAD_REQUEST',
        `from and to are the same version (${fromVersion}); a delta needs two versions`,
      );
    const rows = await this.packages.versionsOf(pkg.id);
    const fromRow = rows.find((row) => row.version === fromVersion);
    if (!fromRow) throw new PlatformError('NOT_FOUND', `Version ${from} of "${pkg.name}" not found`);
    const toRow = rows.find((row) => row.version === toVersion);
    if (!toRow) throw new PlatformError('NOT_FOUND', `Version ${to} of "${pkg.name}" not found`);
    if (semver.gt(fromRow.version, toRow.version)) {
      throw new PlatformError(
        'BAD_REQUEST',
        `from (${fromRow.version}) is newer than to (${toRow.version}); deltas go from an older to a newer version`,
      );
    }
    return { from: fromRow, to: toRow };
  }

  private findRow(packageId: string, pair: VersionPair): Promise<PackageDeltaEntity | null> {
    return this.deltas.findOne({ where: { packageId, fromVersionId: pair.from.id, toVersionId: pair.to.id } });
  }

  private payloadOf(packageId: string, pair: VersionPair, force: boolean): GenerateDeltaPayload {
    return { packageId, fromVersionId: pair.from.id, toVersionId: pair.to.id, force };
  }

  private async enqueue(packageId: string, pair: VersionPair, force: boolean): Promise<string> {
    await this.markPending(packageId, pair);
    const payload = this.payloadOf(packageId, pair, force);
    return this.queue.add(GENERATE_DELTA_JOB, payload, {
      jobId: generateDeltaJobId(payload),
      attempts: GENERATE_DELTA_ATTEMPTS,
    });
  }

  private async pending(pkg: PackageEntity, pair: VersionPair, force: boolean): Promise<DiffOutcome> {
    const jobId = await this.enqueue(pkg.id, pair, force);
    return { state: 'pending', pkg, fromVersion: pair.from.version, toVersion: pair.to.version, jobId };
  }

  /** A row shows the pair is queued; a failed one is queued again; a ready one keeps serving until rebuilt. */
  private async markPending(packageId: string, pair: VersionPair): Promise<void> {
    const now = new Date();
    const existing = await this.findRow(packageId, pair);
    if (existing) {
      if (existing.status === 'failed')
        await this.deltas.update({ id: existing.id }, { status: 'pending', updatedAt: now });
      return;
    }
    try {
      await this.deltas.insert(
        this.deltas.create({
          id: randomUUID(),
          packageId,
          fromVersionId: pair.from.id,
          toVersionId: pair.to.id,
          fromVersion: pair.from.version,
          toVersion: pair.to.version,
          status: 'pending',
          format: null,
          patchSize: null,
          fullSize: null,
          changedFiles: null,
          addedFiles: null,
          deletedFiles: null,
          keptFiles: null,
          exactRebuild: null,
          patchStoragePath: null,
          patchChecksum: null,
          error: null,
          createdAt: now,
          updatedAt: now,
        }),
      );
    } catch (error) {
      // Lost the race to another request for the same pair: its row serves as well.
      if (!(await this.findRow(packageId, pair))) throw error;
    }
  }

  private async runJob(payload: GenerateDeltaPayload, attempt: number): Promise<void> {
    try {
      await this.generator.generate(payload);
    } catch (error) {
      const reason = (error as Error)?.message ?? String(error);
      if (attempt >= GENERATE_DELTA_ATTEMPTS) await this.generator.markFailed(payload, reason);
      else await this.generator.noteError(payload, reason);
      throw error;
    }
  }

  /** On upload: queue deltas from the previous non-yanked versions (rule in pregeneration-sources.ts). */
  private async pregenerate(packageId: string, version: string): Promise<void> {
    const count = this.registry.deltaPreviousVersions;
    if (count <= 0) return;
    const rows = await this.packages.versionsOf(packageId);
    const target = rows.find((row) => row.version === version);
    if (!target) return;
    for (const source of pregenerationSources(rows, target.version, count)) {
      await this.enqueue(packageId, { from: source, to: target }, false);
    }
  }

  /** Every delta of the package, or only those touching `version`: rows first, then the patches from every store. */
  private async removeDeltas(packageId: string, version?: string): Promise<void> {
    const rows = await this.deltas.find({
      where:
        version === undefined
          ? { packageId }
          : [
              { packageId, fromVersion: version },
              { packageId, toVersion: version },
            ],
    });
    if (rows.length === 0) return;
    await this.deltas.delete({ id: In(rows.map((row) => row.id)) });
    for (const row of rows) if (row.patchStoragePath) await this.storage.delete(row.patchStoragePath);
  }
}
