import { isIP } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { LOG_FORMATS, LOG_LEVELS, type LogConfig } from '../../logging/log-config.js';
import type { LoadConfigOptions } from '../load-config-options.js';
import { redactUrl, type EnvironmentReader } from './environment-reader.js';
import { missingRequirements } from './services.js';

export const MESSAGE_BROKERS = ['auto', 'redis', 'ipc', 'local'] as const;
/** SEARCH_MYSQL_ENGINE: the search table's engine on MySQL/MariaDB, read by its migration (docs/search.md). */
export const SEARCH_MYSQL_ENGINES = ['auto', 'mroonga', 'innodb'] as const;
/** SEARCH_MROONGA_RANKING: on a Mroonga table, rank inside Groonga (`mroonga_command()`) or in SQL. */
export const SEARCH_MROONGA_RANKINGS = ['groonga', 'sql'] as const;
/** SEARCH_ENGINE: the database's own full-text engine, or a dedicated Groonga server (SEARCH_GROONGA_URL). */
export const SEARCH_ENGINES = ['database', 'groonga'] as const;
/** SEARCH_GROONGA_URL's default: a Groonga server on this machine, at its standard HTTP port. */
export const DEFAULT_GROONGA_URL = 'http://127.0.0.1:10041';
/** The memory map SQLite reads its file through by default: a 100,000-package registry fits (270 MB). */
export const DEFAULT_SQLITE_MMAP_MIB = 256;

export interface DatabaseConfig {
  type: 'sqlite' | 'mysql';
  /** SQLite file path, or the mysql:// URL. */
  location: string;
  /**
   * SQLite: how much of the database file is read through a memory map (MiB; SQLITE_MMAP_MB, default 256,
   * 0 = none): pages are then used where the OS cache holds them instead of copied in per read.
   */
  sqliteMmapMiB?: number;
  /**
   * MySQL/MariaDB: the engine of the search documents table its migration creates (SEARCH_MYSQL_ENGINE, default
   * `auto`: Mroonga when the server offers it, else InnoDB FULLTEXT). It belongs to the schema, so the database
   * section carries it to the migrations.
   */
  searchMysqlEngine?: (typeof SEARCH_MYSQL_ENGINES)[number];
}

/** Registry search (docs/search.md). */
export interface SearchConfig {
  engine: (typeof SEARCH_ENGINES)[number];
  groongaUrl: string;
  mroongaRanking: (typeof SEARCH_MROONGA_RANKINGS)[number];
}

/**
 * The infrastructure every service shares: data directory, database, Redis, object storage, logs, the platform
 * secret, the message broker and the search engine. These are PlatformConfig's top-level fields.
 */
export interface InfrastructureConfig {
  version: string;
  dataDir: string;
  database: DatabaseConfig;
  redisUrl: string | null;
  /** Prefix for every Redis key and Bull queue this process uses (lets tests share one Redis). */
  redisPrefix: string;
  storage: { primary: string; mirrors: string[] };
  debug: boolean;
  log: LogConfig;
  /**
   * TRUST_PROXY: which peers' X-Forwarded-For/-Proto/-Host are believed (Express's `trust proxy`): false
   * (default: none, the socket's own address and scheme count), `loopback`, a list of addresses/CIDRs, or a hop
   * count. Set it only behind a proxy that overwrites those headers.
   */
  trustProxy: boolean | number | string[];
  runMigrations: boolean;
  /**
   * PLATFORM_JWT_SECRET, the HS256 secret shared with the platform auth module; null when unset, which
   * loadConfig allows only when none of the services it was asked for needs it (see sections/services.ts).
   */
  jwtSecret: string | null;
  authUrl: string | null;
  /**
   * MESSAGE_BROKER: how workers reach each other's WebSocket connections. `auto` = Redis pub/sub when
   * REDIS_URL is set, else this process alone; `ipc` = relayed by the parent process (the worker manager).
   */
  messageBroker: (typeof MESSAGE_BROKERS)[number];
  /**
   * Registry search (docs/search.md): on the database's full-text engine (`database`; mroongaRanking applies to
   * MySQL/MariaDB only, and the table's engine is database.searchMysqlEngine), or on a dedicated Groonga server at
   * groongaUrl (`groonga`).
   */
  search: SearchConfig;
}

/** The names of InfrastructureConfig's fields, to cut the shared section out of a whole PlatformConfig. */
const INFRASTRUCTURE_FIELDS = [
  'version',
  'dataDir',
  'database',
  'redisUrl',
  'redisPrefix',
  'storage',
  'debug',
  'log',
  'trustProxy',
  'runMigrations',
  'jwtSecret',
  'authUrl',
  'messageBroker',
  'search',
] as const satisfies ReadonlyArray<keyof InfrastructureConfig>;

/** The shared infrastructure section of a configuration (its top-level fields), without any service's section. */
export function infrastructureOf(config: InfrastructureConfig): InfrastructureConfig {
  const section: Partial<Record<keyof InfrastructureConfig, unknown>> = {};
  for (const field of INFRASTRUCTURE_FIELDS) section[field] = config[field];
  return section as InfrastructureConfig;
}

/** DATA_DIR, DATABASE_URL, REDIS_URL, STORAGE_*, logs, TRUST_PROXY, the platform secret, the broker and search. */
export function readInfrastructureSection(read: EnvironmentReader, options: LoadConfigOptions): InfrastructureConfig {
  const dataDir = resolve(options.dataDir ?? read.string('DATA_DIR') ?? './data');

  const jwtSecret = options.jwtSecret ?? read.string('PLATFORM_JWT_SECRET');
  if (jwtSecret && jwtSecret.length < 16) read.problems.push('PLATFORM_JWT_SECRET must be at least 16 characters long');
  read.problems.push(...missingRequirements({ jwtSecret: jwtSecret ?? null }, options.services ?? []));

  const database: DatabaseConfig = {
    ...parseDatabaseUrl(read.string('DATABASE_URL'), dataDir, read.problems),
    sqliteMmapMiB: read.integer('SQLITE_MMAP_MB', DEFAULT_SQLITE_MMAP_MIB, { max: 1024 * 1024 }),
    searchMysqlEngine: read.oneOf('SEARCH_MYSQL_ENGINE', SEARCH_MYSQL_ENGINES, 'auto'),
  };
  const redisUrl = read.string('REDIS_URL');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    read.problems.push(`REDIS_URL must start with redis:// or rediss:// (got "${redisUrl}")`);

  const primary = read.string('STORAGE_PRIMARY') ?? `file://${join(dataDir, 'objects')}`;
  const mirrors = read.list('STORAGE_MIRRORS');
  for (const [name, url] of [['STORAGE_PRIMARY', primary], ...mirrors.map((url) => ['STORAGE_MIRRORS', url])]) {
    if (!/^(file|s3|s3\+http|s3\+https):\/\//.test(url)) {
      read.problems.push(`${name} entries must be file://PATH or s3://… URLs (got "${redactUrl(url)}")`);
    }
  }

  const debug = read.boolean('DEBUG', false);
  const trustProxy = readTrustProxy(read);
  const section: InfrastructureConfig = {
    version: read.string('npm_package_version') ?? '0.1.0',
    dataDir,
    database,
    redisUrl,
    redisPrefix: read.string('REDIS_PREFIX') ?? 'tb',
    storage: { primary, mirrors },
    debug,
    log: {
      format: read.oneOf('LOG_FORMAT', LOG_FORMATS, 'auto'),
      level: read.oneOf('LOG_LEVEL', LOG_LEVELS, debug ? 'debug' : 'info'),
    },
    trustProxy,
    runMigrations: read.boolean('RUN_MIGRATIONS', true),
    jwtSecret: jwtSecret ?? null,
    authUrl: read.string('PLATFORM_AUTH_URL'),
    messageBroker: read.oneOf('MESSAGE_BROKER', MESSAGE_BROKERS, 'auto'),
    search: {
      engine: read.oneOf('SEARCH_ENGINE', SEARCH_ENGINES, 'database'),
      groongaUrl: read.httpUrl('SEARCH_GROONGA_URL', DEFAULT_GROONGA_URL),
      mroongaRanking: read.oneOf('SEARCH_MROONGA_RANKING', SEARCH_MROONGA_RANKINGS, 'groonga'),
    },
  };
  if (section.messageBroker === 'redis' && !redisUrl) read.problems.push('MESSAGE_BROKER=redis needs REDIS_URL');
  return section;
}

function parseDatabaseUrl(url: string | null, dataDir: string, problems: string[]): DatabaseConfig {
  if (!url) return { type: 'sqlite', location: join(dataDir, 'platform.sqlite') };
  if (/^mysql:\/\//.test(url) || /^mariadb:\/\//.test(url)) {
    return { type: 'mysql', location: url.replace(/^mariadb:/, 'mysql:') };
  }
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (sqlite) {
    const path = sqlite[1];
    return { type: 'sqlite', location: path === ':memory:' || isAbsolute(path) ? path : resolve(path) };
  }
  problems.push(
    `DATABASE_URL must be mysql://USER:PASSWORD@HOST:PORT/DATABASE or sqlite:PATH (got "${redactUrl(url)}")`,
  );
  return { type: 'sqlite', location: join(dataDir, 'platform.sqlite') };
}

/** Express's named ranges; anything else in the list must be an IP address or CIDR. */
const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: unset/false/0 trusts no proxy; a positive hop count; or names, addresses and CIDRs. */
function readTrustProxy(read: EnvironmentReader): InfrastructureConfig['trustProxy'] {
  const raw = read.string('TRUST_PROXY')?.trim().toLowerCase();
  if (!raw || raw === 'false' || raw === '0') return false;
  if (/^[1-9][0-9]?$/.test(raw)) return Number(raw);
  const entries = read.list('TRUST_PROXY');
  const bad = entries.filter((entry) => !TRUST_PROXY_NAMES.includes(entry) && !isIpOrCidr(entry));
  if (raw === 'true' || bad.length > 0)
    read.problems.push(
      `TRUST_PROXY must be false, a hop count, or a list of loopback, linklocal, uniquelocal, addresses and CIDRs (got "${raw}"); "true" would believe any client's X-Forwarded-* headers`,
    );
  return entries;
}

function isIpOrCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
