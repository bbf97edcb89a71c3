import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { LOG_FORMATS, LOG_LEVELS, type LogConfig } from '../logging/log-config.js';
import { isAbsolute, join, resolve } from 'node:path';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../packaging/zip-inspector.js';

/**
 * The one place that reads process.env. Every service receives a validated, typed PlatformConfig;
 * start-up fails with one message listing every problem.
 */
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

/** Where a service listens. */
export interface ListenConfig {
  host: string;
  port: number;
}

/** The MCP transport: where it listens and the limits of its tools and sessions. */
export interface McpConfig extends ListenConfig {
  /** MCP_TOOL_TIMEOUT_SECONDS: a tool call's budget (30). */
  toolTimeoutSeconds: number;
  /** MCP_MAX_RESULT_BYTES: largest tool result (1 MiB). */
  maxResultBytes: number;
  /** MCP_PYTHON: what runs `python_execute` (`pyodide`: CPython in the WebAssembly sandbox; `off`: the tool is absent). */
  python: 'pyodide' | null;
  /** MCP_PYTHON_TIMEOUT_SECONDS (30) and MCP_PYTHON_MAX_OUTPUT_BYTES (64 KiB). */
  pythonTimeoutSeconds: number;
  pythonMaxOutputBytes: number;
  /** MCP_PYTHON_MEMORY_MB: memory one `python_execute` call may use (256). */
  pythonMemoryMb: number;
  /** MCP_PYTHON_CONCURRENCY: `python_execute` calls running at once; more wait (2). */
  pythonConcurrency: number;
  /** MCP_SESSION_IDLE_SECONDS (3600) and MCP_MAX_SESSIONS (10000). */
  sessionIdleSeconds: number;
  maxSessions: number;
  /** MCP_MODS_RESCAN_SECONDS: how often MODS_DIR is checked for newly installed mods (5; 0: never). */
  modsRescanSeconds: number;
  /**
   * MCP_CORS_ORIGINS: origins whose pages may call the transport besides loopback ones (none by default; `*` = every
   * origin, refused with `--no-auth`); `null` never passes. Keys travel in headers, never cookies.
   */
  corsOrigins: string[];
}

/** A pool of worker processes on consecutive ports from `basePort`. */
export interface WorkerPoolConfig {
  host: string;
  basePort: number;
  count: number;
}

/** The HTTP workers: `tb worker http`, serving the application core at `/api/{module}/{function}`. */
export interface HttpWorkerConfig extends WorkerPoolConfig {
  /** WORKER_ID (or `--worker-id`): this process's name in /health and logs; `http_<8 hex>` when unset. */
  workerId: string | null;
  /** CORS_ORIGINS: origins answered with credentials besides Tauri and any-port localhost / 127.0.0.1. */
  corsOrigins: string[];
  /** DRAIN_TIMEOUT_SECONDS: how long SIGTERM waits for in-flight requests before exiting (default 15). */
  drainTimeoutSeconds: number;
  /** OPEN_MODULES: modules whose API functions need no session, whatever their `level`. */
  openModules: string[];
  /** HTTP_UPLOAD_MAX_BYTES: largest file one multipart field may carry (default 50 MiB). */
  uploadMaxBytes: number;
  /** HTTP_UPLOAD_DIR: where uploads are streamed before the function runs (default `<DATA_DIR>/uploads`). */
  uploadDir: string;
  /** HTTP_BODY_LIMIT_BYTES: largest JSON or form body (default 2 MiB). */
  bodyLimitBytes: number;
  /** CLIENT_LOG_MAX_BYTES: largest `POST /api/client-logs` body (default 64 KiB). */
  clientLogMaxBytes: number;
  /** `Secure` on the session cookie: on unless NODE_ENV=development. */
  secureCookies: boolean;
}

/** One OAuth 2.0 provider of WorkerAuth; `null` client id = not configured (its routes answer 503). */
export interface OAuthProviderConfig {
  clientId: string | null;
  clientSecret: string | null;
  authorizeUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
}

/** WorkerAuth, the platform's identity provider inside the HTTP workers (docs/auth.md). */
export interface WorkerAuthConfig {
  /** ACCESS_TOKEN_TTL_SECONDS (15 min) and REFRESH_TOKEN_TTL_SECONDS (7 days). */
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** SMTP_URL (smtp://user:pass@host:587 or smtps://…); null = magic links are written to the log. */
  smtpUrl: string | null;
  /** MAIL_FROM: the sender of magic-link mails. */
  mailFrom: string;
  /** MAGIC_LINK_TTL_SECONDS (10 min) and the request limits per e-mail / per IP per hour. */
  magicLinkTtlSeconds: number;
  magicLinkPerEmailPerHour: number;
  magicLinkPerIpPerHour: number;
  /** WORKER_PUBLIC_BASE_URL of the workers (links in mails, OAuth redirect URIs); else the request's own origin. */
  publicBaseUrl: string | null;
  /** OAUTH_REDIRECT_BASE_URL: base of `/auth/{provider}/callback`; default publicBaseUrl or the request origin. */
  oauthRedirectBaseUrl: string | null;
  /**
   * OAUTH_ALLOWED_REDIRECT_ORIGINS: further origins `redirect_after` may name. The platform's own origins
   * (WORKER_PUBLIC_BASE_URL, PUBLIC_BASE_URL, the worker's own origin) and loopback are always allowed.
   */
  oauthAllowedRedirectOrigins: string[];
  /** PUBLIC_BASE_URL of the platform (the registry's public URL): an own origin of the web client. */
  platformBaseUrl: string | null;
  /**
   * REFRESH_REUSE_GRACE_SECONDS (30): how long the refresh token just rotated away still buys the current
   * pair, so two tabs refreshing at once do not end each other's login. 0 turns the grace off.
   */
  refreshReuseGraceSeconds: number;
  /** USER_DATA_MAX_BYTES (64 KiB): the cap of a user's `settings` and of `mod_data`, each as JSON. */
  userDataMaxBytes: number;
  discord: OAuthProviderConfig;
  google: OAuthProviderConfig;
  /** Passkeys (WebAuthn): the relying party the browser binds credentials to. */
  webauthn: WebAuthnConfig;
}

/**
 * WEBAUTHN_RP_ID / WEBAUTHN_ORIGINS / WEBAUTHN_RP_NAME. Without them the host and origin of WORKER_PUBLIC_BASE_URL,
 * else PUBLIC_BASE_URL; with neither (null / []) the worker's own Host of each request.
 */
export interface WebAuthnConfig {
  rpId: string | null;
  rpName: string;
  origins: string[];
}

/** The worker manager (`tb workers start`): admin API address, health checks, restart policy. */
export interface ManagerConfig extends ListenConfig {
  /** MANAGER_HEALTH_INTERVAL_SECONDS: how often every worker's `/health` is probed (default 5). */
  healthIntervalSeconds: number;
  /** MANAGER_RESTART_DELAY_SECONDS: wait before restarting a dead or unhealthy worker (default 2). */
  restartDelaySeconds: number;
  /** MANAGER_MAX_RESTARTS: restarts of one worker before it is marked `failed` (default 5). */
  maxRestarts: number;
  /**
   * MANAGER_HTTP_PORT_SLOTS / MANAGER_WS_PORT_SLOTS: the pre-allocated ports (HTTP_WORKER_PORT…, WS_WORKER_PORT…)
   * the generated nginx upstreams list, so scaling and rolling updates need no config rewrite (defaults 8 and 4:
   * twice the default 4 HTTP workers, so a rolling update always finds a free port).
   */
  httpPortSlots: number;
  wsPortSlots: number;
  /** MANAGER_METRICS_INTERVAL_SECONDS (60), MANAGER_CLUSTER_POLL_SECONDS (10), MANAGER_ROLLING_WAIT_SECONDS (2). */
  metricsIntervalSeconds: number;
  clusterPollSeconds: number;
  rollingWaitSeconds: number;
  /** CLUSTER_SECRET shared by the nodes of a cluster; null = a random secret per start (joining then impossible). */
  clusterSecret: string | null;
  /** ADMIN_UI_PASSWORD: the basic-auth password of `/admin/manager/` through nginx (`nginx-config --write-htpasswd`). */
  adminUiPassword: string | null;
  nginx: NginxConfig;
}

/** Where the reverse proxy lives and how the generated site is named (docs/workers.md § nginx). */
export interface NginxConfig {
  /** NGINX_CONF_DIR: the main configuration's folder (default /etc/nginx). */
  confDir: string;
  /** NGINX_BIN: the nginx binary; null = PATH, then /usr/sbin/nginx, /usr/local/sbin/nginx, /usr/local/bin/nginx. */
  bin: string | null;
  /** NGINX_LISTEN_PORT (80) and NGINX_SERVER_NAME (`_`, any host). */
  listenPort: number;
  serverName: string;
  /** NGINX_SITE_NAME: the site file's name under `box-available/` and `box-enabled/` (default toolbox). */
  siteName: string;
  /** NGINX_PREFIX: the prefix nginx runs with (`nginx -p`), for an unprivileged nginx; null = the binary's own. */
  prefix: string | null;
  /** NGINX_API_RATE: requests per second and client address on `/api/` (burst 10×); 0 = no limit (default 20). */
  apiRatePerSecond: number;
}

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

/** The WebSocket worker (`tb worker ws`): connection and message limits, ping interval configurable for tests. */
export interface WsWorkerConfig extends WorkerPoolConfig {
  /** WS_MAX_CONNECTIONS: connections beyond it are closed with 1013 (default 10,000). */
  maxConnections: number;
  /** WS_MAX_CONNECTIONS_PER_IP: connections of one client address (an IPv6 client: its /64) (default 100). */
  maxConnectionsPerIp: number;
  /** WS_MAX_CONNECTIONS_PER_USER: connections of one signed-in user, from any address (default 20). */
  maxConnectionsPerUser: number;
  /**
   * WS_ANONYMOUS_MAX_PERCENT: the share of WS_MAX_CONNECTIONS connections without a signed-in user may take
   * (default 80: the last 20 % wait for signed-in users).
   */
  anonymousMaxPercent: number;
  /** WS_MAX_MESSAGE_BYTES: a larger frame closes the connection with 1009 (default 1 MiB). */
  maxMessageBytes: number;
  /** WS_PING_INTERVAL_SECONDS: ping every connection; one that has not answered the previous ping is dropped (30). */
  pingIntervalSeconds: number;
}

export const MESSAGE_BROKERS = ['auto', 'redis', 'ipc', 'local'] as const;
/** SEARCH_MYSQL_ENGINE: the search table's engine on MySQL/MariaDB, read by its migration (docs/search.md). */
export const SEARCH_MYSQL_ENGINES = ['auto', 'mroonga', 'innodb'] as const;
/** SEARCH_MROONGA_RANKING: on a Mroonga table, rank inside Groonga (`mroonga_command()`) or in SQL. */
export const SEARCH_MROONGA_RANKINGS = ['groonga', 'sql'] as const;
/** SEARCH_ENGINE: the database's own full-text engine, or a dedicated Groonga server (SEARCH_GROONGA_URL). */
export const SEARCH_ENGINES = ['database', 'groonga'] as const;
/** SEARCH_GROONGA_URL's default: a Groonga server on this machine, at its standard HTTP port. */
export const DEFAULT_GROONGA_URL = 'http://127.0.0.1:10041';

/** The model gateway's process settings; what an admin may change at run time lives in DATA_DIR/gateway/config.json. */
export interface GatewayConfig extends ListenConfig {
  /** OLLAMA_URL: the model runtime; when set it overrides `ollama_url` of the gateway's config file. */
  ollamaUrl: string | null;
  /** GATEWAY_IMAGE_MAX_BYTES: largest image fetched from an http(s) `image_url` (OpenAI allows 20 MB). */
  imageMaxBytes: number;
  /** GATEWAY_IMAGE_FETCH_TIMEOUT_MS: how long fetching one remote image may take. */
  imageFetchTimeoutMs: number;
  /** GATEWAY_IMAGE_ALLOW_PRIVATE: let image URLs reach loopback and private networks (off: public addresses only). */
  imageAllowPrivate: boolean;
  /** GATEWAY_MODEL_CACHE_SECONDS: how long a model's `/api/show` capabilities are reused. */
  modelCacheSeconds: number;
  /** GATEWAY_CHAT_BODY_LIMIT: largest chat completion body (data-URL images and input audio travel inside it). */
  chatBodyMaxBytes: number;
  /** GATEWAY_EMBEDDINGS_BODY_LIMIT: largest embeddings body. */
  embeddingsBodyMaxBytes: number;
  /** GATEWAY_BODY_LIMIT: largest body of every other JSON route (speech, live sessions, signup, admin). */
  bodyMaxBytes: number;
  /** TTS_URL / STT_URL: OpenAI-audio backends (base URL with /v1) for speech and transcription; null answers 501. */
  ttsUrl: string | null;
  sttUrl: string | null;
  /** TTS_API_KEY / STT_API_KEY: the bearer token those backends want, if any. */
  ttsApiKey: string | null;
  sttApiKey: string | null;
  /** HF_BASE_URL: the model hub `download-hf` and `search-hf` use (its token is `hf_token` of the gateway config). */
  hubUrl: string;
  /** GATEWAY_HUB_MAX_BYTES: largest model file downloaded from the hub or uploaded as GGUF. */
  hubMaxBytes: number;
  /**
   * GATEWAY_SETTINGS_STORE: where the admin-changeable settings and the admin key live. `auto` is the database
   * when it is MySQL/MariaDB (shared by every node, so a change holds everywhere), else DATA_DIR/gateway/config.json.
   */
  settingsStore: 'file' | 'database';
}

export const GATEWAY_SETTINGS_STORES = ['auto', 'file', 'database'] as const;

export { LOG_FORMATS, type LogConfig };

/**
 * The platform's configuration: the infrastructure every service shares (data directory, database, Redis,
 * object storage, logs, the platform secret), then one section per service with its own host and port.
 */
export interface PlatformConfig {
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
   * loadConfig allows only when none of the services it was asked for needs it (see SERVICE_REQUIREMENTS).
   */
  jwtSecret: string | null;
  authUrl: string | null;
  /** The services this configuration was validated for (what `services` asked loadConfig to check). */
  services: ServiceName[];
  registry: RegistryConfig;
  /** HTTP workers serving `/api/{module}/{function}`. */
  httpWorker: HttpWorkerConfig;
  workerAuth: WorkerAuthConfig;
  /** WebSocket workers. */
  wsWorker: WsWorkerConfig;
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
  search: {
    engine: (typeof SEARCH_ENGINES)[number];
    groongaUrl: string;
    mroongaRanking: (typeof SEARCH_MROONGA_RANKINGS)[number];
  };
  /** The worker manager and its admin UI (127.0.0.1:9005 by default). */
  manager: ManagerConfig;
  /** The tool-protocol (MCP) HTTP transport. */
  mcp: McpConfig;
  /** The model gateway: docs/gateway.md. */
  gateway: GatewayConfig;
  /** The application core: app id, installed mods, network probe and `runHttp`. */
  appCore: {
    /** APP_ID; `testOnly` functions register only when it contains `test`. */
    appId: string;
    /** MODS_DIR, default `<DATA_DIR>/mods`: installed mods and `tb-mods.lock.json`. */
    modsDir: string;
    platformBase: string | null;
    platformBasePort: number | null;
    platformRemoteBase: string | null;
    /** PLATFORM_HTTP_URL: the platform HTTP worker `runHttp` calls. */
    httpUrl: string | null;
    /** FUNCTION_TEST_TIMEOUT_SECONDS: budget of one call in `tb functions test` (default 15). */
    testTimeoutSeconds: number;
    /** DOCS_ROOT: Markdown root of the docs system (default `<cwd>/docs`). */
    docsRoot: string | null;
    /** DOCS_SOURCE_ROOTS (comma-separated): code indexed by the docs system (default `<cwd>/src`). */
    docsSourceRoots: string[];
  };
  /** The registry `tb mods` installs from and publishes to (TB_REGISTRY_URL, TB_TOKEN). */
  modsRegistry: { url: string; token: string | null };
  /** Peer-to-peer RPC (`tb rpc`, docs/rpc.md). */
  rpc: RpcConfig;
}

export interface RpcConfig {
  /** RPC_LISTEN (comma-separated multiaddrs): where `tb rpc serve` listens (default /ip4/0.0.0.0/tcp/9100). */
  listen: string[];
  /** RPC_RELAYS (comma-separated multiaddrs ending in /p2p/RELAY_ID): relays `tb rpc serve` reserves a slot on. */
  relays: string[];
  /** RPC_RELAY_LISTEN: where `tb rpc relay` listens (default /ip4/0.0.0.0/tcp/9101). */
  relayListen: string[];
  /** RPC_RELAY_ALLOW_PEERS (comma-separated peer ids): who may reserve a slot on `tb rpc relay`; empty: anyone. */
  relayAllowPeers: string[];
  /** RPC_CALL_TIMEOUT_SECONDS: the consumer's per-call timeout (30). */
  callTimeoutSeconds: number;
  /** RPC_PROVIDER_TIMEOUT_SECONDS: the provider answers 408 after this long (25). */
  providerTimeoutSeconds: number;
  /** RPC_MAX_MESSAGE_BYTES: largest request or response, both sides (4 MiB). */
  maxMessageBytes: number;
  /** RPC_MAX_CONCURRENT_CALLS: calls a provider runs at once (64). */
  maxConcurrentCalls: number;
  /** RPC_MAX_CONNECTIONS_PER_ADDRESS: inbound connections one address may have open at once (64). */
  maxConnectionsPerAddress: number;
  /** RPC_MAX_PENDING_CONNECTIONS: inbound connections in their upgrade at once, all addresses (128). */
  maxPendingConnections: number;
  /** RPC_MAX_PENDING_PER_ADDRESS: inbound connections one address may have in their upgrade at once (8). */
  maxPendingPerAddress: number;
  /** RPC_UPGRADE_TIMEOUT_SECONDS: an inbound connection not upgraded (Noise + yamux) by then is closed (5). */
  upgradeTimeoutSeconds: number;
  /** RPC_CONNECTIONS_PER_SECOND_PER_ADDRESS: new inbound connections per address and second (5). */
  connectionsPerSecond: number;
  /** RPC_ALLOWED_PEER_CONNECTIONS_PER_SECOND: the same for an address an allowed peer connected from (50). */
  allowedPeerConnectionsPerSecond: number;
}

export const SERVICE_NAMES = ['registry', 'httpWorker', 'wsWorker', 'manager', 'mcp', 'gateway'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * The settings a service cannot start without, beyond what has a default. The registry verifies platform
 * JWTs and signs download URLs; the workers verify the same tokens and sign session cookies. The manager,
 * MCP transport and gateway authenticate with their own API keys (their issues add what they need).
 */
const SERVICE_REQUIREMENTS: Record<ServiceName, Array<'jwtSecret'>> = {
  registry: ['jwtSecret'],
  httpWorker: ['jwtSecret'],
  wsWorker: ['jwtSecret'],
  manager: [],
  mcp: [],
  gateway: [],
};

const SERVICE_LABEL: Record<ServiceName, string> = {
  registry: 'the registry',
  httpWorker: 'the HTTP workers',
  wsWorker: 'the WebSocket workers',
  manager: 'the worker manager',
  mcp: 'the MCP transport',
  gateway: 'the model gateway',
};

/** What is missing for `services` to run on `config` (empty when nothing is). */
export function missingRequirements(
  config: Pick<PlatformConfig, 'jwtSecret'>,
  services: readonly ServiceName[],
): string[] {
  const needSecret = services.filter((service) => SERVICE_REQUIREMENTS[service].includes('jwtSecret'));
  if (needSecret.length === 0 || config.jwtSecret) return [];
  return [
    `PLATFORM_JWT_SECRET is required by ${needSecret.map((service) => SERVICE_LABEL[service]).join(', ')}: the HS256 secret shared with the platform auth module`,
  ];
}

/** The platform secret for a component that cannot work without one: never signs with an empty or made-up secret. */
export function requireJwtSecret(config: Pick<PlatformConfig, 'jwtSecret'>, usedFor: string): string {
  if (!config.jwtSecret) throw new ConfigError([`PLATFORM_JWT_SECRET is required for ${usedFor}`]);
  return config.jwtSecret;
}

/** Fails with the configuration error loadConfig would have given when `config` was not validated for `service`. */
export function assertConfiguredFor(config: PlatformConfig, service: ServiceName): void {
  const problems = missingRequirements(config, [service]);
  if (problems.length > 0) throw new ConfigError(problems);
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export type Environment = Record<string, string | undefined>;

const MiB = 1024 * 1024;

class EnvironmentReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Environment) {}

  string(name: string): string | null {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? null : value.trim();
  }

  integer(name: string, fallback: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  number(name: string, fallback: number, { min = 0 } = {}): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) {
      this.problems.push(`${name} must be a number of at least ${min} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  /** A size in bytes: a whole number, or one with a unit (`512kb`, `8mb`, `1gb`; 1024-based, as body-parser reads them). */
  size(name: string, fallback: number): number {
    const raw = this.string(name);
    if (raw === null) return fallback;
    const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw);
    const value = match
      ? Number(match[1]) * 1024 ** ['b', 'kb', 'mb', 'gb'].indexOf((match[2] ?? 'b').toLowerCase())
      : 0;
    if (!match || value < 1 || !Number.isSafeInteger(value)) {
      this.problems.push(`${name} must be a size in bytes, or with a unit as 512kb, 8mb (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name);
    if (raw === null) return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  workers(name: string): number {
    const raw = this.string(name);
    if (raw === null) return 1;
    if (raw === 'auto') return availableParallelism();
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 64) {
      this.problems.push(`${name} must be a whole number from 1 to 64, or "auto" (got "${raw}")`);
      return 1;
    }
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, { min: 0, max: 65535 });
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === null) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  /** `<PREFIX>_HOST`, `<PREFIX>_PORT` (the first port) and `<PREFIX>S` (how many). */
  workerPool(prefix: string, basePort: number, count: number): { host: string; basePort: number; count: number } {
    return {
      host: this.string(`${prefix}_HOST`) ?? '127.0.0.1',
      basePort: this.port(`${prefix}_PORT`, basePort),
      count: this.integer(`${prefix}S`, count, { min: 1, max: 64 }),
    };
  }

  list(name: string): string[] {
    const raw = this.string(name);
    return raw === null
      ? []
      : raw
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean);
  }
}

/** Express's named ranges; anything else in the list must be an IP address or CIDR. */
const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: unset/false/0 trusts no proxy; a positive hop count; or names, addresses and CIDRs. */
function readTrustProxy(read: EnvironmentReader): PlatformConfig['trustProxy'] {
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

export interface LoadConfigOptions {
  /**
   * The services this process runs: their required settings (the platform secret …) must be present.
   * Commands that verify and sign no token (`tb mods`, `tb functions`, `tb docs`, `tb db`) pass none.
   */
  services?: readonly ServiceName[];
  /** The registry's port (`--port`). */
  port?: number;
  dataDir?: string;
  /** The registry's process count (`--workers`). */
  workers?: number;
  /** The HTTP worker's port and id (`tb worker http --port N --worker-id ID`). */
  httpWorkerPort?: number;
  httpWorkerId?: string;
  /** The model gateway's port (`tb gateway --port`). */
  gatewayPort?: number;
  /** Lets `tb up` and `tb token` supply the secret persisted in the data directory without writing it into the environment. */
  jwtSecret?: string;
}

export function loadConfig(env: Environment = process.env, options: LoadConfigOptions = {}): PlatformConfig {
  const read = new EnvironmentReader(env);
  const services = [...(options.services ?? [])];
  const dataDir = resolve(options.dataDir ?? read.string('DATA_DIR') ?? './data');
  // PORT and HOST stay the registry's, as before services had sections.
  const registryHost = read.string('REGISTRY_HOST') ?? read.string('HOST') ?? '0.0.0.0';
  const registryPort =
    options.port ?? read.port(read.string('REGISTRY_PORT') === null ? 'PORT' : 'REGISTRY_PORT', 4025);

  const jwtSecret = options.jwtSecret ?? read.string('PLATFORM_JWT_SECRET');
  if (jwtSecret && jwtSecret.length < 16) read.problems.push('PLATFORM_JWT_SECRET must be at least 16 characters long');
  read.problems.push(...missingRequirements({ jwtSecret }, services));

  const database = {
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

  const publicBaseUrl = read.string('PUBLIC_BASE_URL');
  if (publicBaseUrl && !/^https?:\/\//.test(publicBaseUrl))
    read.problems.push('PUBLIC_BASE_URL must be an http(s) URL');
  const debug = read.boolean('DEBUG', false);
  const trustProxy = readTrustProxy(read);

  const config: PlatformConfig = {
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
    services,
    registry: {
      host: registryHost,
      port: registryPort,
      workers:
        options.workers ?? read.workers(read.string('REGISTRY_WORKERS') === null ? 'WORKERS' : 'REGISTRY_WORKERS'),
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
    },
    // Workers and the manager sit behind the reverse proxy, the MCP transport and gateway behind their
    // operator's choice: all listen on loopback unless told otherwise.
    httpWorker: httpWorkerSection(read, dataDir, options),
    wsWorker: {
      ...read.workerPool('WS_WORKER', 8100, 1),
      maxConnections: read.integer('WS_MAX_CONNECTIONS', 10_000, { min: 1 }),
      maxConnectionsPerIp: read.integer('WS_MAX_CONNECTIONS_PER_IP', 100, { min: 1 }),
      maxConnectionsPerUser: read.integer('WS_MAX_CONNECTIONS_PER_USER', 20, { min: 1 }),
      anonymousMaxPercent: read.integer('WS_ANONYMOUS_MAX_PERCENT', 80, { min: 0, max: 100 }),
      maxMessageBytes: read.integer('WS_MAX_MESSAGE_BYTES', MiB, { min: 1 }),
      pingIntervalSeconds: read.number('WS_PING_INTERVAL_SECONDS', 30, { min: 0.01 }),
    },
    messageBroker: read.oneOf('MESSAGE_BROKER', MESSAGE_BROKERS, 'auto'),
    search: {
      engine: read.oneOf('SEARCH_ENGINE', SEARCH_ENGINES, 'database'),
      groongaUrl: httpUrl(read, 'SEARCH_GROONGA_URL', DEFAULT_GROONGA_URL),
      mroongaRanking: read.oneOf('SEARCH_MROONGA_RANKING', SEARCH_MROONGA_RANKINGS, 'groonga'),
    },
    manager: {
      host: read.string('MANAGER_HOST') ?? '127.0.0.1',
      port: read.port('MANAGER_PORT', 9005),
      healthIntervalSeconds: read.number('MANAGER_HEALTH_INTERVAL_SECONDS', 5, { min: 0.05 }),
      restartDelaySeconds: read.number('MANAGER_RESTART_DELAY_SECONDS', 2, { min: 0 }),
      maxRestarts: read.integer('MANAGER_MAX_RESTARTS', 5, { min: 0, max: 1000 }),
      httpPortSlots: read.integer('MANAGER_HTTP_PORT_SLOTS', 8, { min: 1, max: 256 }),
      wsPortSlots: read.integer('MANAGER_WS_PORT_SLOTS', 4, { min: 1, max: 256 }),
      metricsIntervalSeconds: read.number('MANAGER_METRICS_INTERVAL_SECONDS', 60, { min: 0.05 }),
      clusterPollSeconds: read.number('MANAGER_CLUSTER_POLL_SECONDS', 10, { min: 0.05 }),
      rollingWaitSeconds: read.number('MANAGER_ROLLING_WAIT_SECONDS', 2, { min: 0 }),
      clusterSecret: read.string('CLUSTER_SECRET'),
      adminUiPassword: read.string('ADMIN_UI_PASSWORD'),
      nginx: {
        confDir: read.string('NGINX_CONF_DIR') ?? '/etc/nginx',
        bin: read.string('NGINX_BIN'),
        listenPort: read.port('NGINX_LISTEN_PORT', 80),
        serverName: read.string('NGINX_SERVER_NAME') ?? '_',
        siteName: read.string('NGINX_SITE_NAME') ?? 'toolbox',
        prefix: read.string('NGINX_PREFIX'),
        apiRatePerSecond: read.integer('NGINX_API_RATE', 20, { min: 0, max: 1_000_000 }),
      },
    },
    workerAuth: workerAuthSection(read),
    mcp: {
      host: read.string('MCP_HOST') ?? '127.0.0.1',
      port: read.port('MCP_PORT', 8765),
      toolTimeoutSeconds: read.number('MCP_TOOL_TIMEOUT_SECONDS', 30, { min: 0.001 }),
      maxResultBytes: read.integer('MCP_MAX_RESULT_BYTES', MiB, { min: 1024 }),
      // Only the sandbox runs caller code; a host interpreter (the old `python3`) is refused, not used.
      python: read.oneOf('MCP_PYTHON', ['pyodide', 'off'], 'pyodide') === 'off' ? null : 'pyodide',
      pythonTimeoutSeconds: read.number('MCP_PYTHON_TIMEOUT_SECONDS', 30, { min: 0.001 }),
      pythonMaxOutputBytes: read.integer('MCP_PYTHON_MAX_OUTPUT_BYTES', 64 * 1024, { min: 1 }),
      pythonMemoryMb: read.integer('MCP_PYTHON_MEMORY_MB', 256, { min: 128, max: 4096 }),
      pythonConcurrency: read.integer('MCP_PYTHON_CONCURRENCY', 2, { min: 1, max: 64 }),
      sessionIdleSeconds: read.number('MCP_SESSION_IDLE_SECONDS', 3600, { min: 0.001 }),
      maxSessions: read.integer('MCP_MAX_SESSIONS', 10_000, { min: 1 }),
      modsRescanSeconds: read.number('MCP_MODS_RESCAN_SECONDS', 5, { min: 0 }),
      corsOrigins: originList(read, 'MCP_CORS_ORIGINS'),
    },
    gateway: {
      host: read.string('GATEWAY_HOST') ?? '127.0.0.1',
      port: options.gatewayPort ?? read.port('GATEWAY_PORT', 4000),
      ollamaUrl: read.string('OLLAMA_URL')?.replace(/\/+$/, '') ?? null,
      imageMaxBytes: read.integer('GATEWAY_IMAGE_MAX_BYTES', 20 * MiB, { min: 1 }),
      imageFetchTimeoutMs: read.integer('GATEWAY_IMAGE_FETCH_TIMEOUT_MS', 10_000, { min: 1 }),
      imageAllowPrivate: read.boolean('GATEWAY_IMAGE_ALLOW_PRIVATE', false),
      modelCacheSeconds: read.integer('GATEWAY_MODEL_CACHE_SECONDS', 60, { min: 0 }),
      // OpenAI takes 20 MB images, but a chat with pictures needs a few MiB; the caps are read before the body.
      chatBodyMaxBytes: read.size('GATEWAY_CHAT_BODY_LIMIT', 8 * MiB),
      embeddingsBodyMaxBytes: read.size('GATEWAY_EMBEDDINGS_BODY_LIMIT', 2 * MiB),
      bodyMaxBytes: read.size('GATEWAY_BODY_LIMIT', 256 * 1024),
      ttsUrl: read.string('TTS_URL')?.replace(/\/+$/, '') ?? null,
      sttUrl: read.string('STT_URL')?.replace(/\/+$/, '') ?? null,
      ttsApiKey: read.string('TTS_API_KEY'),
      sttApiKey: read.string('STT_API_KEY'),
      hubUrl: (read.string('HF_BASE_URL') ?? 'https://huggingface.co').replace(/\/+$/, ''),
      hubMaxBytes: read.integer('GATEWAY_HUB_MAX_BYTES', 64 * 1024 * MiB, { min: 1 }),
      settingsStore: gatewaySettingsStore(
        read.oneOf('GATEWAY_SETTINGS_STORE', GATEWAY_SETTINGS_STORES, 'auto'),
        database,
      ),
    },
    appCore: {
      appId: read.string('APP_ID') ?? 'toolbox',
      modsDir: resolve(read.string('MODS_DIR') ?? join(dataDir, 'mods')),
      platformBase: read.string('PLATFORM_BASE'),
      platformBasePort:
        read.string('PLATFORM_BASE_PORT') === null
          ? null
          : read.integer('PLATFORM_BASE_PORT', 0, { min: 1, max: 65535 }),
      platformRemoteBase: read.string('PLATFORM_REMOTE_BASE')?.replace(/\/+$/, '') ?? null,
      httpUrl: read.string('PLATFORM_HTTP_URL')?.replace(/\/+$/, '') ?? null,
      testTimeoutSeconds: read.number('FUNCTION_TEST_TIMEOUT_SECONDS', 15, { min: 0.001 }),
      docsRoot: read.string('DOCS_ROOT') === null ? null : resolve(read.string('DOCS_ROOT')!),
      docsSourceRoots: read.list('DOCS_SOURCE_ROOTS').map((root) => resolve(root)),
    },
    modsRegistry: {
      url: (read.string('TB_REGISTRY_URL') ?? 'http://127.0.0.1:4025').replace(/\/+$/, ''),
      token: read.string('TB_TOKEN'),
    },
    rpc: {
      listen: read.string('RPC_LISTEN') === null ? ['/ip4/0.0.0.0/tcp/9100'] : read.list('RPC_LISTEN'),
      relays: read.list('RPC_RELAYS'),
      relayAllowPeers: read.list('RPC_RELAY_ALLOW_PEERS'),
      relayListen: read.string('RPC_RELAY_LISTEN') === null ? ['/ip4/0.0.0.0/tcp/9101'] : read.list('RPC_RELAY_LISTEN'),
      callTimeoutSeconds: read.number('RPC_CALL_TIMEOUT_SECONDS', 30, { min: 0.001 }),
      providerTimeoutSeconds: read.number('RPC_PROVIDER_TIMEOUT_SECONDS', 25, { min: 0.001 }),
      maxMessageBytes: read.integer('RPC_MAX_MESSAGE_BYTES', 4 * MiB, { min: 1024, max: 1024 * MiB }),
      maxConcurrentCalls: read.integer('RPC_MAX_CONCURRENT_CALLS', 64, { min: 1, max: 10_000 }),
      maxConnectionsPerAddress: read.integer('RPC_MAX_CONNECTIONS_PER_ADDRESS', 64, { min: 1, max: 100_000 }),
      maxPendingConnections: read.integer('RPC_MAX_PENDING_CONNECTIONS', 128, { min: 1, max: 100_000 }),
      maxPendingPerAddress: read.integer('RPC_MAX_PENDING_PER_ADDRESS', 8, { min: 1, max: 100_000 }),
      upgradeTimeoutSeconds: read.number('RPC_UPGRADE_TIMEOUT_SECONDS', 5, { min: 0.1 }),
      connectionsPerSecond: read.integer('RPC_CONNECTIONS_PER_SECOND_PER_ADDRESS', 5, { min: 1, max: 100_000 }),
      allowedPeerConnectionsPerSecond: read.integer('RPC_ALLOWED_PEER_CONNECTIONS_PER_SECOND', 50, {
        min: 1,
        max: 100_000,
      }),
    },
  };

  if (config.messageBroker === 'redis' && !redisUrl) read.problems.push('MESSAGE_BROKER=redis needs REDIS_URL');
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}
function httpWorkerSection(read: EnvironmentReader, dataDir: string, options: LoadConfigOptions): HttpWorkerConfig {
  const pool = read.workerPool('HTTP_WORKER', 8000, 4);
  const corsOrigins = originList(read, 'CORS_ORIGINS');
  return {
    ...pool,
    basePort: options.httpWorkerPort ?? pool.basePort,
    workerId: options.httpWorkerId ?? read.string('WORKER_ID'),
    corsOrigins,
    drainTimeoutSeconds: read.number('DRAIN_TIMEOUT_SECONDS', 15, { min: 0 }),
    openModules: read.list('OPEN_MODULES'),
    uploadMaxBytes: read.integer('HTTP_UPLOAD_MAX_BYTES', 50 * MiB, { min: 1 }),
    uploadDir: resolve(read.string('HTTP_UPLOAD_DIR') ?? join(dataDir, 'uploads')),
    bodyLimitBytes: read.integer('HTTP_BODY_LIMIT_BYTES', 2 * MiB, { min: 1024 }),
    clientLogMaxBytes: read.integer('CLIENT_LOG_MAX_BYTES', 64 * 1024, { min: 256, max: 16 * MiB }),
    secureCookies: read.string('NODE_ENV') !== 'development',
  };
}

/** A comma-separated list of origins (`scheme://host[:port]`, trailing slashes dropped) or `*`. */
function originList(read: EnvironmentReader, name: string): string[] {
  const origins = read.list(name).map((origin) => origin.replace(/\/+$/, ''));
  for (const origin of origins) {
    if (origin !== '*' && !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(origin))
      read.problems.push(`${name} entries must be origins like https://app.example.com (got "${origin}")`);
  }
  return origins;
}

/** An http(s) URL setting, or a problem reported with the others. */
function httpUrl(read: EnvironmentReader, name: string, fallback: string): string {
  const value = read.string(name) ?? fallback;
  if (!/^https?:\/\/[^\s]+$/i.test(value)) read.problems.push(`${name} must be an http(s) URL (got "${value}")`);
  return value;
}

function oauthProvider(
  read: EnvironmentReader,
  prefix: 'DISCORD' | 'GOOGLE',
  defaults: { authorize: string; token: string; userinfo: string },
): OAuthProviderConfig {
  const url = (name: string, fallback: string) => httpUrl(read, name, fallback);
  return {
    clientId: read.string(`${prefix}_CLIENT_ID`),
    clientSecret: read.string(`${prefix}_CLIENT_SECRET`),
    authorizeUrl: url(`${prefix}_AUTHORIZE_URL`, defaults.authorize),
    tokenUrl: url(`${prefix}_TOKEN_URL`, defaults.token),
    userinfoUrl: url(`${prefix}_USERINFO_URL`, defaults.userinfo),
  };
}

function workerAuthSection(read: EnvironmentReader): WorkerAuthConfig {
  const origins = read.list('OAUTH_ALLOWED_REDIRECT_ORIGINS').map((origin) => origin.replace(/\/+$/, ''));
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/i.test(origin))
      read.problems.push(
        `OAUTH_ALLOWED_REDIRECT_ORIGINS entries must be origins like https://app.example.com (got "${origin}")`,
      );
  }
  const smtpUrl = read.string('SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\//i.test(smtpUrl)) read.problems.push('SMTP_URL must start with smtp:// or smtps://');
  const baseUrl = (name: string) => read.string(name)?.replace(/\/+$/, '') ?? null;
  return {
    accessTokenTtlSeconds: read.integer('ACCESS_TOKEN_TTL_SECONDS', 900, { min: 30, max: 24 * 3600 }),
    refreshTokenTtlSeconds: read.integer('REFRESH_TOKEN_TTL_SECONDS', 7 * 24 * 3600, { min: 60 }),
    smtpUrl,
    mailFrom: read.string('MAIL_FROM') ?? 'Toolbox Platform <no-reply@localhost>',
    magicLinkTtlSeconds: read.integer('MAGIC_LINK_TTL_SECONDS', 600, { min: 60, max: 24 * 3600 }),
    magicLinkPerEmailPerHour: read.integer('MAGIC_LINK_PER_EMAIL_PER_HOUR', 5, { min: 1 }),
    magicLinkPerIpPerHour: read.integer('MAGIC_LINK_PER_IP_PER_HOUR', 30, { min: 1 }),
    publicBaseUrl: baseUrl('WORKER_PUBLIC_BASE_URL'),
    oauthRedirectBaseUrl: baseUrl('OAUTH_REDIRECT_BASE_URL'),
    oauthAllowedRedirectOrigins: origins,
    platformBaseUrl: baseUrl('PUBLIC_BASE_URL'),
    refreshReuseGraceSeconds: read.integer('REFRESH_REUSE_GRACE_SECONDS', 30, { min: 0, max: 300 }),
    userDataMaxBytes: read.integer('USER_DATA_MAX_BYTES', 64 * 1024, { min: 1024, max: 16 * 1024 * 1024 }),
    discord: oauthProvider(read, 'DISCORD', {
      authorize: 'https://discord.com/api/oauth2/authorize',
      token: 'https://discord.com/api/oauth2/token',
      userinfo: 'https://discord.com/api/users/@me',
    }),
    google: oauthProvider(read, 'GOOGLE', {
      authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
    }),
    webauthn: webAuthnSection(read, baseUrl('WORKER_PUBLIC_BASE_URL') ?? baseUrl('PUBLIC_BASE_URL')),
  };
}

function webAuthnSection(read: EnvironmentReader, baseUrl: string | null): WebAuthnConfig {
  let base: URL | null = null;
  try {
    base = baseUrl ? new URL(baseUrl) : null;
  } catch {
    base = null;
  }
  const rpId = read.string('WEBAUTHN_RP_ID')?.toLowerCase() ?? base?.hostname ?? null;
  // A relying party id is a bare domain: no scheme, port or path (WebAuthn compares it with the origin's host).
  if (rpId !== null && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(rpId))
    read.problems.push(`WEBAUTHN_RP_ID must be a domain like example.com, without scheme or port (got "${rpId}")`);
  const configured = read.list('WEBAUTHN_ORIGINS').map((origin) => origin.replace(/\/+$/, ''));
  const origins = configured.length > 0 ? configured : base ? [base.origin] : [];
  for (const origin of origins) {
    let host: string | null = null;
    if (/^https?:\/\/[^/\s]+$/i.test(origin)) {
      try {
        host = new URL(origin).hostname;
      } catch {
        host = null;
      }
    }
    if (host === null)
      read.problems.push(`WEBAUTHN_ORIGINS entries must be origins like https://app.example.com (got "${origin}")`);
    // Browsers only use a credential on the RP id's own host or its subdomains.
    else if (rpId !== null && host !== rpId && !host.endsWith(`.${rpId}`))
      read.problems.push(`WEBAUTHN_ORIGINS entry ${origin} is not on WEBAUTHN_RP_ID ${rpId} or a subdomain of it`);
  }
  return { rpId, rpName: read.string('WEBAUTHN_RP_NAME') ?? 'Toolbox', origins };
}

/** The memory map SQLite reads its file through by default: a 100,000-package registry fits (270 MB). */
export const DEFAULT_SQLITE_MMAP_MIB = 256;

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

/** Hides the password of a URL so configuration errors never print secrets. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:***@');
}

function gatewaySettingsStore(
  choice: (typeof GATEWAY_SETTINGS_STORES)[number],
  database: { type: string },
): GatewayConfig['settingsStore'] {
  if (choice !== 'auto') return choice;
  return database.type === 'mysql' ? 'database' : 'file';
}
