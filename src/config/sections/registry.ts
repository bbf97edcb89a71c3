import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../../packaging/zip-inspector.js';
import type { LoadConfigOptions } from '../load-config-options.js';
import { MiB, type EnvironmentReader, type ListenConfig } from './environment-reader.js';

/** The package and artifact registry: `tb registry`, `tb up`. */
export interface RegistryConfig extends ListenConfig {
  /** Processes sharing the port (REGISTRY_WORKERS or WORKERS, `--workers`; `auto` = one per core). */
  workers: number;
  publicBaseUrl: string | null;
  signedUrlTtlSeconds: number;
  uploadMaxBytes: number;
  /** UPLOAD_STAGING_MAX_AGE_SECONDS: staging without an owner in its name (older releases) is swept past this age. */
  uploadStagingMaxAgeSeconds: number;
  zipLimits: ZipLimits;
  rateLimit: { anonPerHour: number; authPerHour: number };
  adminUsers: string[];
  requireVerifiedPublisher: boolean;
  deltaPreviousVersions: number;
  deltaInlineMaxBytes: number;
}

/**
 * The registry's address, read before everything else: PORT and HOST were the platform's only address before
 * services had sections, so their problems still come first.
 */
export function readRegistryListen(read: EnvironmentReader, options: LoadConfigOptions): ListenConfig {
  return {
    host: read.string('REGISTRY_HOST') ?? read.string('HOST') ?? '0.0.0.0',
    port: options.port ?? read.port(read.string('REGISTRY_PORT') === null ? 'PORT' : 'REGISTRY_PORT', 4025),
  };
}

export function readRegistrySection(
  read: EnvironmentReader,
  listen: ListenConfig,
  options: LoadConfigOptions,
): RegistryConfig {
  const publicBaseUrl = read.string('PUBLIC_BASE_URL');
  if (publicBaseUrl && !/^https?:\/\//.test(publicBaseUrl))
    read.problems.push('PUBLIC_BASE_URL must be an http(s) URL');
  return {
    ...listen,
    workers: options.workers ?? read.workers(read.string('REGISTRY_WORKERS') === null ? 'WORKERS' : 'REGISTRY_WORKERS'),
    publicBaseUrl: publicBaseUrl?.replace(/\/+$/, '') ?? null,
    signedUrlTtlSeconds: read.integer('SIGNED_URL_TTL_SECONDS', 600, { min: 1, max: 7 * 24 * 3600 }),
    uploadMaxBytes: read.integer('UPLOAD_MAX_BYTES', 100 * MiB, { min: 1 }),
    uploadStagingMaxAgeSeconds: read.integer('UPLOAD_STAGING_MAX_AGE_SECONDS', 3600, { min: 1 }),
    zipLimits: {
      maxEntries: read.integer('ZIP_MAX_ENTRIES', DEFAULT_ZIP_LIMITS.maxEntries, { min: 1 }),
      maxTotalUncompressedBytes: read.integer(
        'ZIP_MAX_UNCOMPRESSED_BYTES',
        DEFAULT_ZIP_LIMITS.maxTotalUncompressedBytes,
        { min: 1 },
      ),
      maxEntryRatio: read.number('ZIP_MAX_ENTRY_RATIO', DEFAULT_ZIP_LIMITS.maxEntryRatio, { min: 1 }),
      entryRatioFloorBytes: read.integer('ZIP_ENTRY_RATIO_FLOOR_BYTES', DEFAULT_ZIP_LIMITS.entryRatioFloorBytes, {
        min: 0,
      }),
      maxNameLength: read.integer('ZIP_MAX_NAME_LENGTH', DEFAULT_ZIP_LIMITS.maxNameLength, { min: 1, max: 4096 }),
      maxArchiveRatio: read.number('ZIP_MAX_ARCHIVE_RATIO', DEFAULT_ZIP_LIMITS.maxArchiveRatio, { min: 1 }),
      archiveRatioThresholdBytes: read.integer(
        'ZIP_ARCHIVE_RATIO_THRESHOLD_BYTES',
        DEFAULT_ZIP_LIMITS.archiveRatioThresholdBytes,
        { min: 0 },
      ),
    },
    rateLimit: {
      anonPerHour: read.integer('RATE_LIMIT_ANON_PER_HOUR', 100, { min: 1 }),
      authPerHour: read.integer('RATE_LIMIT_AUTH_PER_HOUR', 1000, { min: 1 }),
    },
    adminUsers: read.list('REGISTRY_ADMIN_USERS'),
    requireVerifiedPublisher: read.boolean('REGISTRY_REQUIRE_VERIFIED_PUBLISHER', false),
    deltaPreviousVersions: read.integer('DELTA_PREVIOUS_VERSIONS', 3, { min: 0, max: 50 }),
    deltaInlineMaxBytes: read.integer('DELTA_INLINE_MAX_BYTES', 32 * MiB, { min: 0 }),
  };
}
