import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { createConnection } from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/config.js';
import { PackageVersionEntity } from '../../src/modules/registry/entities/package-version.entity.js';
import { PackageEntity } from '../../src/modules/registry/entities/package.entity.js';
import { PublisherEntity } from '../../src/modules/registry/entities/publisher.entity.js';
import { createHttpApp } from '../../src/apps/create-http-app.js';
import { RegistryAppModule, registryHttpAppOptions } from '../../src/apps/registry.app-module.js';
import type { DiscoveryData } from './discovery-data.js';

/** Loads the discovery data into a registry started in-process (bench/discovery.ts, bench/search-accuracy.ts). */

const ROWS_PER_INSERT = 500;

export async function insertAll(dataSource: DataSource, data: DiscoveryData): Promise<void> {
  const now = new Date();
  const publisherRows = data.publishers.map((publisher, index) => ({
    id: publisher.id,
    name: publisher.name,
    nameLower: publisher.name.toLowerCase(),
    displayName: publisher.name,
    email: null,
    homepage: null,
    verificationStatus: publisher.verified ? ('verified' as const) : ('unverified' as const),
    ownerUserId: `bench-owner-${index}`,
    createdAt: now,
    updatedAt: now,
  }));
  const packageRows = data.packages.map((pkg) => ({
    id: pkg.id,
    name: pkg.name,
    nameLower: pkg.name.toLowerCase(),
    displayName: pkg.displayName,
    description: pkg.description,
    packageType: pkg.packageType,
    visibility: 'public' as const,
    homepage: null,
    repository: null,
    license: 'MIT',
    keywords: pkg.keywords,
    readme: null,
    publisherId: data.publishers[pkg.publisherIndex].id,
    latestVersion:
      [...pkg.versions].reverse().find((version) => !version.yanked)?.version ??
      pkg.versions[pkg.versions.length - 1].version,
    totalDownloads: pkg.downloads,
    createdAt: now,
    updatedAt: now,
  }));
  const versionRows = data.packages.flatMap((pkg) =>
    pkg.versions.map((version, index) => ({
      id: `${pkg.id.slice(0, 34)}${index.toString().padStart(2, '0')}`,
      packageId: pkg.id,
      version: version.version,
      changelog: null,
      toolboxVersion: version.toolboxVersion,
      dependencies: version.dependencies,
      sizeBytes: 1024,
      checksumSha256: 'f'.repeat(64),
      storageKey: `packages/bench/${pkg.id}/${version.version}.zip`,
      yanked: version.yanked,
      yankReason: null,
      downloads: 0,
      publishedAt: now,
    })),
  );
  const bulk = async <T extends object>(target: new () => T, rows: T[]) => {
    await dataSource.transaction(async (manager) => {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        await manager
          .createQueryBuilder()
          .insert()
          .into(target)
          .values(rows.slice(start, start + ROWS_PER_INSERT) as never)
          .updateEntity(false)
          .execute();
      }
    });
  };
  await bulk(PublisherEntity, publisherRows as PublisherEntity[]);
  await bulk(PackageEntity, packageRows as PackageEntity[]);
  await bulk(PackageVersionEntity, versionRows as PackageVersionEntity[]);
}

export const BENCH_SECRET = 'bench-secret-0123456789abcdefghijklmnop';

/**
 * The search settings of the benchmark's environment: SEARCH_ENGINE and SEARCH_GROONGA_URL (a dedicated Groonga
 * server: the loading app indexes into it, and the measured registry process, which inherits the environment, uses
 * it), SEARCH_MYSQL_ENGINE (the table engine the loading app's migration creates) and SEARCH_MROONGA_RANKING.
 */
export function searchEngineSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of ['SEARCH_ENGINE', 'SEARCH_GROONGA_URL', 'SEARCH_MYSQL_ENGINE', 'SEARCH_MROONGA_RANKING'])
    if (process.env[name]) settings[name] = process.env[name] as string;
  return settings;
}

export async function startRegistry(databaseUrl: string | undefined) {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-discovery-'));
  const config = loadConfig({
    PLATFORM_JWT_SECRET: BENCH_SECRET,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_ANON_PER_HOUR: '10000000',
    RATE_LIMIT_AUTH_PER_HOUR: '10000000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...searchEngineSettings(),
  });
  const app: INestApplication = await createHttpApp(RegistryAppModule.forRoot(config), {
    ...registryHttpAppOptions(config),
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${port}`, dataDir };
}

export async function withMysqlDatabase<T>(url: string, action: (databaseUrl: string) => Promise<T>): Promise<T> {
  const keep = process.env.BENCH_KEEP === '1';
  const base = new URL(url);
  const named = base.pathname.replace(/^\//, '') || 'toolbox_bench';
  const database = keep ? named : `${named}_${randomBytes(4).toString('hex')}`;
  const server = new URL(url);
  server.pathname = '/';
  const admin = await createConnection({ uri: server.toString() });
  await admin.query(
    `CREATE DATABASE ${keep ? 'IF NOT EXISTS ' : ''}\`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  try {
    const target = new URL(url);
    target.pathname = `/${database}`;
    return await action(target.toString());
  } finally {
    if (!keep) await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}
