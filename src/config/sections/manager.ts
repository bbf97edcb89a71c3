import type { EnvironmentReader, ListenConfig } from './environment-reader.js';

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

// The manager's admin API sits behind the reverse proxy: loopback unless told otherwise.
export function readManagerSection(read: EnvironmentReader): ManagerConfig {
  return {
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
  };
}
