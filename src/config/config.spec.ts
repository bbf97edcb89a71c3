import { ConfigError, assertConfiguredFor, loadConfig, requireJwtSecret, type Environment } from './config.js';

const SECRET = 'a-secret-of-32-characters-at-least';

function problemsOf(env: Environment, services: Parameters<typeof loadConfig>[1] = {}): string[] {
  try {
    loadConfig(env, services);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const MCP_DEFAULT_LIMITS = {
  toolTimeoutSeconds: 30,
  maxResultBytes: 1048576,
  python: 'pyodide',
  pythonTimeoutSeconds: 30,
  pythonMaxOutputBytes: 65536,
  pythonMemoryMb: 256,
  pythonConcurrency: 2,
  sessionIdleSeconds: 3600,
  maxSessions: 10000,
  modsRescanSeconds: 5,
  corsOrigins: [],
};

describe('loadConfig', () => {
  describe('sections', () => {
    it('reads the WebSocket worker limits and the message broker', () => {
      const config = loadConfig({
        WS_MAX_CONNECTIONS: '5',
        WS_MAX_MESSAGE_BYTES: '2048',
        WS_PING_INTERVAL_SECONDS: '0.2',
        MESSAGE_BROKER: 'ipc',
      });
      expect(config.wsWorker).toMatchObject({ maxConnections: 5, maxMessageBytes: 2048, pingIntervalSeconds: 0.2 });
      expect(config.messageBroker).toBe('ipc');
    });

    it('reads the WebSocket worker per-client limits, defaulting to 100 per address, 20 per user, 80 % anonymous', () => {
      expect(loadConfig({}).wsWorker).toMatchObject({
        maxConnectionsPerIp: 100,
        maxConnectionsPerUser: 20,
        anonymousMaxPercent: 80,
      });
      expect(
        loadConfig({ WS_MAX_CONNECTIONS_PER_IP: '3', WS_MAX_CONNECTIONS_PER_USER: '2', WS_ANONYMOUS_MAX_PERCENT: '0' })
          .wsWorker,
      ).toMatchObject({ maxConnectionsPerIp: 3, maxConnectionsPerUser: 2, anonymousMaxPercent: 0 });
      expect(() => loadConfig({ WS_MAX_CONNECTIONS_PER_IP: '0', WS_ANONYMOUS_MAX_PERCENT: '101' })).toThrow(
        /WS_MAX_CONNECTIONS_PER_IP[\s\S]*WS_ANONYMOUS_MAX_PERCENT/,
      );
    });

    it('keeps the gateway settings in the database when it is MySQL/MariaDB, in the file on SQLite', () => {
      expect(loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3306/toolbox' }).gateway.settingsStore).toBe(
        'database',
      );
      expect(loadConfig({}).gateway.settingsStore).toBe('file');
    });

    it('lets GATEWAY_SETTINGS_STORE choose the store and refuses an unknown one', () => {
      expect(
        loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3306/toolbox', GATEWAY_SETTINGS_STORE: 'file' }).gateway
          .settingsStore,
      ).toBe('file');
      expect(loadConfig({ GATEWAY_SETTINGS_STORE: 'database' }).gateway.settingsStore).toBe('database');
      expect(() => loadConfig({ GATEWAY_SETTINGS_STORE: 'redis' })).toThrow(/GATEWAY_SETTINGS_STORE must be one of/);
    });

    it('reads the gateway body caps as bytes or with a unit, and refuses other text', () => {
      const gateway = loadConfig({
        GATEWAY_CHAT_BODY_LIMIT: '4mb',
        GATEWAY_EMBEDDINGS_BODY_LIMIT: '512KB',
        GATEWAY_BODY_LIMIT: '65536',
      }).gateway;
      expect(gateway).toMatchObject({
        chatBodyMaxBytes: 4 * 1024 * 1024,
        embeddingsBodyMaxBytes: 512 * 1024,
        bodyMaxBytes: 65536,
      });
      expect(problemsOf({ GATEWAY_CHAT_BODY_LIMIT: 'big', GATEWAY_BODY_LIMIT: '0' })).toEqual([
        'GATEWAY_CHAT_BODY_LIMIT must be a size in bytes, or with a unit as 512kb, 8mb (got "big")',
        'GATEWAY_BODY_LIMIT must be a size in bytes, or with a unit as 512kb, 8mb (got "0")',
      ]);
    });

    it('refuses MESSAGE_BROKER=redis without REDIS_URL and an unknown broker', () => {
      expect(() => loadConfig({ MESSAGE_BROKER: 'redis' })).toThrow(/MESSAGE_BROKER=redis needs REDIS_URL/);
      expect(() => loadConfig({ MESSAGE_BROKER: 'zmq' })).toThrow(/MESSAGE_BROKER must be one of/);
    });

    it('reads the search engine settings and refuses unknown ones', () => {
      expect(loadConfig({}).search).toEqual({
        engine: 'database',
        groongaUrl: 'http://127.0.0.1:10041',
        mroongaRanking: 'groonga',
      });
      expect(
        loadConfig({
          SEARCH_ENGINE: 'groonga',
          SEARCH_GROONGA_URL: 'https://search.internal:8443/groonga',
          SEARCH_MROONGA_RANKING: 'sql',
        }).search,
      ).toEqual({
        engine: 'groonga',
        groongaUrl: 'https://search.internal:8443/groonga',
        mroongaRanking: 'sql',
      });
      expect(() => loadConfig({ SEARCH_ENGINE: 'meilisearch' })).toThrow(/SEARCH_ENGINE must be one of/);
      expect(() => loadConfig({ SEARCH_GROONGA_URL: 'localhost:10041' })).toThrow(
        /SEARCH_GROONGA_URL must be an http\(s\) URL/,
      );
      expect(() => loadConfig({ SEARCH_MROONGA_RANKING: 'fast' })).toThrow(/SEARCH_MROONGA_RANKING must be one of/);
    });

    it('reads the SQLite memory map size, 256 MiB by default, and refuses a bad one', () => {
      expect(loadConfig({ DATA_DIR: '/srv/tb' }).database).toEqual({
        type: 'sqlite',
        location: '/srv/tb/platform.sqlite',
        sqliteMmapMiB: 256,
        searchMysqlEngine: 'auto',
      });
      expect(loadConfig({ SQLITE_MMAP_MB: '0' }).database.sqliteMmapMiB).toBe(0);
      expect(() => loadConfig({ SQLITE_MMAP_MB: '-1' })).toThrow(/SQLITE_MMAP_MB/);
      expect(() => loadConfig({ SQLITE_MMAP_MB: 'lots' })).toThrow(/SQLITE_MMAP_MB/);
    });

    it('gives the database section the search table engine its migration creates, and refuses an unknown one', () => {
      expect(loadConfig({ SEARCH_MYSQL_ENGINE: 'innodb' }).database.searchMysqlEngine).toBe('innodb');
      expect(loadConfig({ SEARCH_MYSQL_ENGINE: 'mroonga' }).database.searchMysqlEngine).toBe('mroonga');
      expect(() => loadConfig({ SEARCH_MYSQL_ENGINE: 'myisam' })).toThrow(/SEARCH_MYSQL_ENGINE must be one of/);
    });

    it("gives every service its own host and port with the seeds' defaults", () => {
      const config = loadConfig({});
      expect(config.registry).toMatchObject({ host: '0.0.0.0', port: 4025, workers: 1 });
      expect(config.httpWorker).toMatchObject({ host: '127.0.0.1', basePort: 8000, count: 4 });
      expect(config.wsWorker).toEqual({
        host: '127.0.0.1',
        basePort: 8100,
        count: 1,
        maxConnections: 10_000,
        maxConnectionsPerIp: 100,
        maxConnectionsPerUser: 20,
        anonymousMaxPercent: 80,
        maxMessageBytes: 1024 * 1024,
        pingIntervalSeconds: 30,
      });
      expect(config.messageBroker).toBe('auto');
      expect(config.mcp).toEqual({ host: '127.0.0.1', port: 8765, ...MCP_DEFAULT_LIMITS });
      expect(config.gateway).toEqual({
        host: '127.0.0.1',
        port: 4000,
        ollamaUrl: null,
        settingsStore: 'file',
        imageMaxBytes: 20 * 1024 * 1024,
        imageFetchTimeoutMs: 10_000,
        imageAllowPrivate: false,
        modelCacheSeconds: 60,
        chatBodyMaxBytes: 8 * 1024 * 1024,
        embeddingsBodyMaxBytes: 2 * 1024 * 1024,
        bodyMaxBytes: 256 * 1024,
        ttsUrl: null,
        sttUrl: null,
        ttsApiKey: null,
        sttApiKey: null,
        hubUrl: 'https://huggingface.co',
        hubMaxBytes: 64 * 1024 * 1024 * 1024,
      });
      expect(config.manager).toEqual({
        host: '127.0.0.1',
        port: 9005,
        healthIntervalSeconds: 5,
        restartDelaySeconds: 2,
        maxRestarts: 5,
        httpPortSlots: 8,
        wsPortSlots: 4,
        metricsIntervalSeconds: 60,
        clusterPollSeconds: 10,
        rollingWaitSeconds: 2,
        clusterSecret: null,
        adminUiPassword: null,
        nginx: {
          confDir: '/etc/nginx',
          bin: null,
          listenPort: 80,
          serverName: '_',
          siteName: 'toolbox',
          prefix: null,
          apiRatePerSecond: 20,
        },
      });
    });

    it("gives the HTTP worker its drain, CORS, open-module and upload settings with the issue's defaults", () => {
      const defaults = loadConfig({ DATA_DIR: '/srv/tb' }).httpWorker;
      expect(defaults).toMatchObject({
        workerId: null,
        corsOrigins: [],
        drainTimeoutSeconds: 15,
        openModules: [],
        uploadMaxBytes: 50 * 1024 * 1024,
        uploadDir: '/srv/tb/uploads',
        clientLogMaxBytes: 64 * 1024,
        secureCookies: true,
      });
      const set = loadConfig(
        {
          CORS_ORIGINS: 'https://app.example.com/, http://10.0.0.5:3000',
          DRAIN_TIMEOUT_SECONDS: '2.5',
          OPEN_MODULES: 'CloudM.Auth, public',
          HTTP_UPLOAD_MAX_BYTES: '1000',
          WORKER_ID: 'w-env',
          NODE_ENV: 'development',
        },
        { httpWorkerPort: 0, httpWorkerId: 'w-flag' },
      ).httpWorker;
      expect(set).toMatchObject({
        basePort: 0,
        workerId: 'w-flag',
        corsOrigins: ['https://app.example.com', 'http://10.0.0.5:3000'],
        drainTimeoutSeconds: 2.5,
        openModules: ['CloudM.Auth', 'public'],
        uploadMaxBytes: 1000,
        secureCookies: false,
      });
      expect(() => loadConfig({ CORS_ORIGINS: 'not an origin', DRAIN_TIMEOUT_SECONDS: '-1' })).toThrow(
        /CORS_ORIGINS entries must be origins[\s\S]*DRAIN_TIMEOUT_SECONDS must be a number/,
      );
    });

    it('keeps the registry-only settings in the registry section', () => {
      const config = loadConfig({
        RATE_LIMIT_ANON_PER_HOUR: '7',
        REGISTRY_ADMIN_USERS: 'a, b',
        UPLOAD_MAX_BYTES: '1234',
        PUBLIC_BASE_URL: 'https://reg.example/',
      });
      expect(config.registry.rateLimit).toEqual({ anonPerHour: 7, authPerHour: 1000 });
      expect(config.registry.adminUsers).toEqual(['a', 'b']);
      expect(config.registry.uploadMaxBytes).toBe(1234);
      expect(config.registry.publicBaseUrl).toBe('https://reg.example');
      expect(config.registry.signedUrlTtlSeconds).toBe(600);
      expect(config.registry.deltaPreviousVersions).toBe(3);
      for (const key of [
        'rateLimit',
        'adminUsers',
        'uploadMaxBytes',
        'publicBaseUrl',
        'zipLimits',
        'port',
        'host',
        'workers',
      ]) {
        expect(Object.keys(config)).not.toContain(key);
      }
    });

    it("reads each service's host and port from its own variables", () => {
      const config = loadConfig({
        HTTP_WORKER_HOST: '0.0.0.0',
        HTTP_WORKER_PORT: '9000',
        HTTP_WORKERS: '4',
        WS_WORKER_PORT: '9100',
        WS_WORKERS: '2',
        MANAGER_HOST: '10.0.0.2',
        MANAGER_PORT: '9999',
        MCP_HOST: '0.0.0.0',
        MCP_PORT: '8766',
        GATEWAY_HOST: '::',
        GATEWAY_PORT: '4001',
      });
      expect(config.httpWorker).toMatchObject({ host: '0.0.0.0', basePort: 9000, count: 4 });
      expect(config.wsWorker).toEqual({
        host: '127.0.0.1',
        basePort: 9100,
        count: 2,
        maxConnections: 10_000,
        maxConnectionsPerIp: 100,
        maxConnectionsPerUser: 20,
        anonymousMaxPercent: 80,
        maxMessageBytes: 1024 * 1024,
        pingIntervalSeconds: 30,
      });
      expect(config.manager).toEqual({
        host: '10.0.0.2',
        port: 9999,
        healthIntervalSeconds: 5,
        restartDelaySeconds: 2,
        maxRestarts: 5,
        httpPortSlots: 8,
        wsPortSlots: 4,
        metricsIntervalSeconds: 60,
        clusterPollSeconds: 10,
        rollingWaitSeconds: 2,
        clusterSecret: null,
        adminUiPassword: null,
        nginx: {
          confDir: '/etc/nginx',
          bin: null,
          listenPort: 80,
          serverName: '_',
          siteName: 'toolbox',
          prefix: null,
          apiRatePerSecond: 20,
        },
      });
      expect(config.mcp).toEqual({ host: '0.0.0.0', port: 8766, ...MCP_DEFAULT_LIMITS });
      expect(config.gateway).toEqual({
        host: '::',
        port: 4001,
        ollamaUrl: null,
        settingsStore: 'file',
        imageMaxBytes: 20 * 1024 * 1024,
        imageFetchTimeoutMs: 10_000,
        imageAllowPrivate: false,
        modelCacheSeconds: 60,
        chatBodyMaxBytes: 8 * 1024 * 1024,
        embeddingsBodyMaxBytes: 2 * 1024 * 1024,
        bodyMaxBytes: 256 * 1024,
        ttsUrl: null,
        sttUrl: null,
        ttsApiKey: null,
        sttApiKey: null,
        hubUrl: 'https://huggingface.co',
        hubMaxBytes: 64 * 1024 * 1024 * 1024,
      });
    });

    it('reads the MCP transport limits and refuses bad ones', () => {
      const config = loadConfig({
        MCP_TOOL_TIMEOUT_SECONDS: '2.5',
        MCP_MAX_RESULT_BYTES: '4096',
        MCP_PYTHON: 'off',
        MCP_SESSION_IDLE_SECONDS: '60',
        MCP_MAX_SESSIONS: '5',
        MCP_CORS_ORIGINS: 'https://a.example,https://b.example',
      });
      expect(config.mcp).toMatchObject({
        toolTimeoutSeconds: 2.5,
        maxResultBytes: 4096,
        python: null,
        sessionIdleSeconds: 60,
        maxSessions: 5,
        corsOrigins: ['https://a.example', 'https://b.example'],
      });
      expect(() => loadConfig({ MCP_MAX_RESULT_BYTES: '10', MCP_MAX_SESSIONS: '0' })).toThrow(
        /MCP_MAX_RESULT_BYTES[\s\S]*MCP_MAX_SESSIONS/,
      );
    });

    it('allows no origin but loopback pages by default and refuses MCP_CORS_ORIGINS entries that are no origins', () => {
      expect(loadConfig({}).mcp.corsOrigins).toEqual([]);
      expect(loadConfig({ MCP_CORS_ORIGINS: 'https://a.example/,*' }).mcp.corsOrigins).toEqual([
        'https://a.example',
        '*',
      ]);
      expect(() => loadConfig({ MCP_CORS_ORIGINS: 'null' })).toThrow(/MCP_CORS_ORIGINS entries must be origins/);
    });

    it('reads the python_execute sandbox limits and refuses a host interpreter', () => {
      expect(loadConfig({ MCP_PYTHON_MEMORY_MB: '512', MCP_PYTHON_CONCURRENCY: '4' }).mcp).toMatchObject({
        python: 'pyodide',
        pythonMemoryMb: 512,
        pythonConcurrency: 4,
      });
      expect(problemsOf({ MCP_PYTHON: 'python3' })).toEqual(['MCP_PYTHON must be one of pyodide, off (got "python3")']);
      expect(problemsOf({ MCP_PYTHON_MEMORY_MB: '16', MCP_PYTHON_CONCURRENCY: '0' })).toEqual([
        'MCP_PYTHON_MEMORY_MB must be a whole number from 128 to 4096 (got "16")',
        'MCP_PYTHON_CONCURRENCY must be a whole number from 1 to 64 (got "0")',
      ]);
    });

    it("keeps PORT, HOST and WORKERS as the registry's, with REGISTRY_* taking precedence", () => {
      expect(loadConfig({ PORT: '5000', HOST: '127.0.0.1', WORKERS: '3' }).registry).toMatchObject({
        host: '127.0.0.1',
        port: 5000,
        workers: 3,
      });
      const config = loadConfig({
        PORT: '5000',
        REGISTRY_PORT: '6000',
        HOST: '127.0.0.1',
        REGISTRY_HOST: '10.1.1.1',
        WORKERS: '3',
        REGISTRY_WORKERS: '2',
      });
      expect(config.registry).toMatchObject({ host: '10.1.1.1', port: 6000, workers: 2 });
      expect(config.gateway.port).toBe(4000);
    });

    it("lets command-line flags override the registry's port and workers", () => {
      expect(loadConfig({ PORT: '5000' }, { port: 0, workers: 2 }).registry).toMatchObject({ port: 0, workers: 2 });
    });

    it('reads the shared log settings, debug level under DEBUG', () => {
      expect(loadConfig({}).log).toEqual({ format: 'auto', level: 'info' });
      expect(loadConfig({ DEBUG: 'true' }).log.level).toBe('debug');
      expect(loadConfig({ LOG_FORMAT: 'json', LOG_LEVEL: 'warn' }).log).toEqual({ format: 'json', level: 'warn' });
    });
  });

  describe('problems', () => {
    it('lists every problem of every section at once', () => {
      expect(
        problemsOf(
          {
            PORT: 'http',
            PLATFORM_JWT_SECRET: 'short',
            REDIS_URL: 'localhost:6379',
            LOG_FORMAT: 'xml',
            RATE_LIMIT_ANON_PER_HOUR: '-1',
            HTTP_WORKER_PORT: '70000',
            WS_WORKERS: '0',
            MANAGER_PORT: 'nine',
            MCP_PORT: '-5',
            GATEWAY_PORT: '4000.5',
          },
          { services: ['registry'] },
        ),
      ).toEqual([
        expect.stringContaining('PORT must be'),
        expect.stringContaining('PLATFORM_JWT_SECRET must be at least 16'),
        expect.stringContaining('REDIS_URL must start with'),
        expect.stringContaining('LOG_FORMAT must be one of auto, pretty, json'),
        expect.stringContaining('RATE_LIMIT_ANON_PER_HOUR'),
        expect.stringContaining('HTTP_WORKER_PORT must be'),
        expect.stringContaining('WS_WORKERS must be'),
        expect.stringContaining('MANAGER_PORT must be'),
        expect.stringContaining('MCP_PORT must be'),
        expect.stringContaining('GATEWAY_PORT must be'),
      ]);
    });

    it('says which variable a bad REGISTRY_PORT came from', () => {
      expect(problemsOf({ REGISTRY_PORT: 'x', PORT: '4025' })).toEqual([
        expect.stringContaining('REGISTRY_PORT must be'),
      ]);
    });
  });

  describe('the platform secret', () => {
    it('is not needed when no service that uses it is asked for (tb mods, tb functions, tb docs, tb db)', () => {
      const config = loadConfig({});
      expect(config.jwtSecret).toBeNull();
      expect(config.services).toEqual([]);
    });

    it('is required by the registry, naming it', () => {
      expect(problemsOf({}, { services: ['registry'] })).toEqual([
        expect.stringMatching(/^PLATFORM_JWT_SECRET is required by the registry/),
      ]);
    });

    it('is required once for all the services that use it, naming each', () => {
      expect(problemsOf({}, { services: ['registry', 'httpWorker', 'mcp'] })).toEqual([
        expect.stringMatching(/^PLATFORM_JWT_SECRET is required by the registry, the HTTP workers:/),
      ]);
    });

    it('is not required by the MCP transport, the gateway or the manager', () => {
      expect(problemsOf({}, { services: ['mcp', 'gateway', 'manager'] })).toEqual([]);
    });

    it("comes from the environment or from the options (tb up's persisted secret)", () => {
      expect(loadConfig({ PLATFORM_JWT_SECRET: SECRET }, { services: ['registry'] }).jwtSecret).toBe(SECRET);
      expect(loadConfig({}, { services: ['registry'], jwtSecret: SECRET }).jwtSecret).toBe(SECRET);
    });

    it('is checked again by a service built from a configuration not validated for it', () => {
      const config = loadConfig({});
      expect(() => assertConfiguredFor(config, 'registry')).toThrow(/PLATFORM_JWT_SECRET is required by the registry/);
      expect(() => assertConfiguredFor(config, 'gateway')).not.toThrow();
      expect(() => requireJwtSecret(config, 'signed download URLs')).toThrow(/required for signed download URLs/);
      expect(requireJwtSecret(loadConfig({ PLATFORM_JWT_SECRET: SECRET }), 'x')).toBe(SECRET);
    });
  });
});

describe('workerAuth section', () => {
  it('defaults to 15 min / 7 day tokens, 10 min magic links, log delivery and unconfigured OAuth', () => {
    const { workerAuth } = loadConfig({});
    expect(workerAuth).toMatchObject({
      accessTokenTtlSeconds: 900,
      refreshTokenTtlSeconds: 604800,
      smtpUrl: null,
      magicLinkTtlSeconds: 600,
      magicLinkPerEmailPerHour: 5,
      magicLinkPerIpPerHour: 30,
      oauthAllowedRedirectOrigins: [],
      discord: { clientId: null, authorizeUrl: 'https://discord.com/api/oauth2/authorize' },
      google: { clientId: null, tokenUrl: 'https://oauth2.googleapis.com/token' },
    });
  });

  it('reads the providers, allowed origins and SMTP URL, and lists every bad value', () => {
    const { workerAuth } = loadConfig({
      GOOGLE_CLIENT_ID: 'gid',
      GOOGLE_CLIENT_SECRET: 'gsecret',
      GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token',
      OAUTH_ALLOWED_REDIRECT_ORIGINS: 'https://app.example.com/, http://localhost:3000',
      SMTP_URL: 'smtps://u:p@mail.example.com:465',
    });
    expect(workerAuth.google).toMatchObject({
      clientId: 'gid',
      clientSecret: 'gsecret',
      tokenUrl: 'http://127.0.0.1:9/token',
    });
    expect(workerAuth.oauthAllowedRedirectOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    expect(workerAuth.smtpUrl).toBe('smtps://u:p@mail.example.com:465');
    expect(
      problemsOf({
        OAUTH_ALLOWED_REDIRECT_ORIGINS: 'https://app.example.com/path',
        SMTP_URL: 'http://mail',
        DISCORD_TOKEN_URL: 'ftp://x',
        ACCESS_TOKEN_TTL_SECONDS: '5',
      }),
    ).toEqual([
      expect.stringContaining('OAUTH_ALLOWED_REDIRECT_ORIGINS'),
      'SMTP_URL must start with smtp:// or smtps://',
      'ACCESS_TOKEN_TTL_SECONDS must be a whole number from 30 to 86400 (got "5")',
      expect.stringContaining('DISCORD_TOKEN_URL'),
    ]);
  });

  it("takes the passkey relying party from WEBAUTHN_*, else the workers' or the registry's public URL", () => {
    expect(loadConfig({}).workerAuth.webauthn).toEqual({ rpId: null, rpName: 'Toolbox', origins: [] });
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://hub.example.com/' }).workerAuth.webauthn).toMatchObject({
      rpId: 'hub.example.com',
      origins: ['https://hub.example.com'],
    });
    expect(
      loadConfig({ PUBLIC_BASE_URL: 'https://hub.example.com', WORKER_PUBLIC_BASE_URL: 'https://app.example.com:8443' })
        .workerAuth.webauthn,
    ).toMatchObject({ rpId: 'app.example.com', origins: ['https://app.example.com:8443'] });
    expect(
      loadConfig({
        WEBAUTHN_RP_ID: 'Example.com',
        WEBAUTHN_ORIGINS: 'https://example.com, https://app.example.com/',
        WEBAUTHN_RP_NAME: 'My Box',
      }).workerAuth.webauthn,
    ).toEqual({ rpId: 'example.com', rpName: 'My Box', origins: ['https://example.com', 'https://app.example.com'] });
  });

  it('refuses an RP id with a scheme or port, and origins that are not on the RP id', () => {
    expect(problemsOf({ WEBAUTHN_RP_ID: 'https://example.com' })).toEqual([expect.stringContaining('WEBAUTHN_RP_ID')]);
    expect(problemsOf({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://example.org' })).toEqual([
      'WEBAUTHN_ORIGINS entry https://example.org is not on WEBAUTHN_RP_ID example.com or a subdomain of it',
    ]);
    expect(problemsOf({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://badexample.com' })).toHaveLength(1);
    expect(problemsOf({ WEBAUTHN_ORIGINS: 'https://example.com/login' })).toEqual([
      expect.stringContaining('WEBAUTHN_ORIGINS entries must be origins'),
    ]);
  });
});

describe('documentation of the configuration', () => {
  /** Every variable loadConfig reads, found by handing it an environment that records each lookup. */
  function variablesRead(): string[] {
    const names = new Set<string>();
    const env = new Proxy({} as Environment, {
      get(_target, name) {
        if (typeof name === 'string') names.add(name);
        return undefined;
      },
    });
    loadConfig(env);
    loadConfig(
      new Proxy({ PLATFORM_BASE_PORT: '1', DOCS_ROOT: 'docs' } as Environment, {
        get(target, name) {
          if (typeof name === 'string') names.add(name);
          return (target as Record<string, string>)[name as string];
        },
      }),
    );
    names.delete('npm_package_version');
    return [...names].sort();
  }

  it('lists every variable in .env.example and the README', async () => {
    const { readFile } = await import('node:fs/promises');
    const example = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const variables = variablesRead();
    expect(variables).toEqual(
      expect.arrayContaining([
        'REGISTRY_PORT',
        'HTTP_WORKER_PORT',
        'WS_WORKERS',
        'MANAGER_HOST',
        'MCP_PORT',
        'GATEWAY_HOST',
        'LOG_FORMAT',
      ]),
    );
    expect(variables.filter((name) => !new RegExp(`^${name}=`, 'm').test(example))).toEqual([]);
    expect(variables.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});
