import { PROXY_UPSTREAM_IDLE_SECONDS } from '../../http-worker/upstream-keep-alive.js';
import type { BackupServer } from '../manager-hooks.js';

/** Everything the generated site depends on; rendering is a pure function of it (site-config.spec.ts). */
export interface SiteConfigInput {
  siteName: string;
  listenPort: number;
  serverName: string;
  /** Also listen on `[::]:port`. */
  ipv6: boolean;
  /**
   * `listen … deferred` (Linux TCP_DEFER_ACCEPT): a connection is accepted once its request has arrived, so an
   * nginx worker that is shutting down after a reload never holds a new connection without its request, which
   * it would close (the client would see a reset).
   */
  deferredAccept: boolean;
  /** The pre-allocated HTTP and WS worker ports, every one listed whether a worker holds it or not. */
  httpPorts: number[];
  wsPorts: number[];
  workerHost: string;
  /** Healthy HTTP workers of cluster nodes, and their registry and MCP transport: `backup` servers of the upstreams. */
  backups: BackupServer[];
  registry: { host: string; port: number };
  mcp: { host: string; port: number };
  manager: { host: string; port: number };
  /** Sent as X-Cluster-Secret to the manager for requests that passed basic auth; the file is then 0640. */
  managerSecret: string;
  /** The htpasswd file of `/admin/manager/`. */
  htpasswdPath: string;
  /** Whether that file existed when the site was written; without it every admin request gets 401. */
  adminEnabled?: boolean;
  clientMaxBodyBytes: number;
  logDir: string;
  /** Requests per second and client address on `/api/` (burst ten times that); 0 = no limit. */
  apiRatePerSecond: number;
}

/**
 * How long nginx skips a server after a failed connect (`fail_timeout`, with `max_fails=1`): this node's registry and
 * MCP transport, and the other nodes' servers (backups), where a connect to a machine that is down may take until
 * `proxy_connect_timeout` and is worth trying only now and then.
 */
export const PROXY_FAIL_TIMEOUT_SECONDS = 5;

/**
 * The same for this node's pre-allocated worker ports. A free port refuses the connect at once (loopback or the
 * node's own address: nothing waits), and a worker that has just started listening on a port nginx found refusing is
 * skipped until this has passed: the part of a rolling update under traffic that waits for nginx to use the new
 * workers (ManagerProcess.untilAnotherWorkerServes), 5 to 6 s with 5 s, 1 to 2 s with 1 s. The cost is one refused
 * connect per free port and second under traffic, retried on the next port (nothing was sent: safe for any method).
 */
export const WORKER_SLOT_FAIL_TIMEOUT_SECONDS = 1;

const hostOf = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
const address = (host: string, port: number) => {
  const h = hostOf(host);
  return h.includes(':') ? `[${h}]:${port}` : `${h}:${port}`;
};

/** nginx string literal: the secret is hex, but nothing here may break out of the quotes. */
const quoted = (value: string) => `"${value.replace(/["\\$\r\n]/g, '')}"`;

/**
 * The reverse-proxy site of the platform, generated once with every pre-allocated port up, so that
 * scaling, restarts and rolling updates need neither a rewrite nor a reload (a reload makes nginx's retiring
 * processes reset client connections): a port without a worker refuses the connect, nginx sends the request to
 * the next server (nothing was sent, so any method is safe) and skips that port for `fail_timeout`. A draining
 * worker stops listening and keeps its connections until nginx closes them (upstream-keep-alive.ts). Included at
 * `http` level (`tb workers nginx-init`).
 */
export function renderSiteConfig(input: SiteConfigInput): string {
  const zone = input.siteName.replace(/[^A-Za-z0-9_]/g, '_');
  const passiveCheck = `max_fails=1 fail_timeout=${PROXY_FAIL_TIMEOUT_SECONDS}s`;
  const slotCheck = `max_fails=1 fail_timeout=${WORKER_SLOT_FAIL_TIMEOUT_SECONDS}s`;
  const server = (port: number) => `    server ${address(input.workerHost, port)} ${slotCheck};`;
  const json = (status: number, code: string, message: string) =>
    `default_type application/json;\n        return ${status} '{"code":"${code}","message":"${message}","detail":null,"request_id":null}';`;
  const proxyHeaders = `proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Cluster-Secret "";`;
  // A connect error means the request never reached the worker: retrying it elsewhere is safe for any method.
  // A timeout or a 502/503 after the request was sent is retried for idempotent methods only (nginx's default).
  // No try limit: free slots, a killed worker and not yet started ports can come before the live one, and every
  // server is tried at most once per request anyway.
  const nextUpstream = 'proxy_next_upstream error timeout http_502 http_503;';
  const backupsOf = (service: BackupServer['service'], own?: { host: string; port: number }) =>
    input.backups
      .filter((backup) => backup.service === service)
      // Another node's service at this node's own address (one machine, shared ports) would only repeat it.
      .filter((backup) => !own || address(backup.host, backup.port) !== address(own.host, own.port))
      .map((backup) => `    server ${address(backup.host, backup.port)} ${passiveCheck} backup;\n`)
      .join('');
  // The registry and the MCP transport of this node, with the other nodes' as backups: nginx sends a request to
  // them only when this node's refuses or fails (nginx's rule above: a request that reached the server is resent
  // only when its method is idempotent). No upstream keep-alive: these services close idle connections on their
  // own schedule, and a POST sent on a connection they just closed could not be resent.
  const serviceUpstream = (service: 'registry' | 'mcp') =>
    `upstream ${zone}_${service} {\n    server ${address(input[service].host, input[service].port)} ${passiveCheck};\n${backupsOf(service, input[service])}}`;
  const auth = (location: string, methods: string) => `    location = ${location} {
        limit_except ${methods} { deny all; }
        limit_req zone=${zone}_auth burst=10 nodelay;
        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        ${nextUpstream}
        proxy_connect_timeout 10s;
        proxy_read_timeout 30s;
    }`;

  return `# Toolbox Platform — ${input.siteName} (generated by \`tb workers nginx-config\`; the worker manager rewrites it).
# HTTP worker ports ${input.httpPorts[0]}–${input.httpPorts[input.httpPorts.length - 1]}, WS worker ports ${input.wsPorts[0]}–${input.wsPorts[input.wsPorts.length - 1]} (pre-allocated).
# Every port is listed up: one without a worker refuses the connect and nginx tries the next (${slotCheck}),
# so scaling and rolling updates change nothing here and reload nothing.
# This file carries the manager secret: keep it mode 0640.

${input.apiRatePerSecond > 0 ? `limit_req_zone $binary_remote_addr zone=${zone}_api:10m rate=${input.apiRatePerSecond}r/s;\n` : ''}limit_req_zone $binary_remote_addr zone=${zone}_auth:10m rate=5r/s;
limit_req_status 429;

map $http_upgrade $${zone}_connection_upgrade {
    default upgrade;
    ''      close;
}

# 1 for a request that would change state on behalf of a page of another site: behind basic auth the browser adds
# its credentials to such a request too, and the manager secret is added after them. Safe methods pass; then the
# browser's own word (Sec-Fetch-Site) decides, else its Origin: none (no browser page sent it) or one naming the
# host the request was sent to passes, any other (null included) is foreign.
map "$request_method|$http_sec_fetch_site|$http_origin|$http_host" $${zone}_cross_site_change {
    default 1;
    "~^(GET|HEAD|OPTIONS)\\|" 0;
    "~^[^|]*\\|(cross-site|same-site)\\|" 1;
    "~^[^|]*\\|[^|]*\\|\\|" 0;
    "~*^[^|]*\\|[^|]*\\|https?://([^/|]+)\\|\\1$" 0;
}

upstream ${zone}_http {
    least_conn;
    # Shared by nginx's worker processes: which ports refused (and since when) and the connection counts. A
    # request one process has sent to a new worker clears that port's failure for all, which the manager relies on.
    zone ${zone}_http 256k;
${input.httpPorts.map(server).join('\n')}
${backupsOf(undefined)}    keepalive 64;
    keepalive_requests 10000;
    # Shorter than the workers' own keep-alive timeout: nginx, not the worker, closes an idle connection.
    keepalive_timeout ${PROXY_UPSTREAM_IDLE_SECONDS}s;
}

upstream ${zone}_ws {
    hash $request_uri consistent;
${input.wsPorts.map(server).join('\n')}
}

${serviceUpstream('registry')}

${serviceUpstream('mcp')}

server {
    listen ${input.listenPort}${input.deferredAccept ? ' deferred' : ''};
${input.ipv6 ? `    listen [::]:${input.listenPort}${input.deferredAccept ? ' deferred' : ''};\n` : ''}    server_name ${input.serverName};
    access_log ${input.logDir}/${input.siteName}_access.log;
    error_log ${input.logDir}/${input.siteName}_error.log warn;
    server_tokens off;
    client_max_body_size ${input.clientMaxBodyBytes};

    add_header X-Frame-Options SAMEORIGIN always;
    add_header X-Content-Type-Options nosniff always;
    add_header Referrer-Policy strict-origin-when-cross-origin always;

    proxy_connect_timeout 5s;
    proxy_send_timeout 300s;
    proxy_read_timeout 300s;

    error_page 429 = @rate_limited;
    error_page 502 503 504 = @unavailable;

    location @rate_limited {
        ${json(429, 'RATE_LIMITED', 'Rate limit exceeded')}
    }
    location @unavailable {
        ${json(502, 'SERVICE_UNAVAILABLE', 'No worker answered; try again shortly')}
    }

    location /api/ {
${input.apiRatePerSecond > 0 ? `        limit_req zone=${zone}_api burst=${input.apiRatePerSecond * 10} nodelay;\n` : ''}        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        ${nextUpstream}
    }

    location /sse/ {
        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        proxy_buffering off;
        proxy_cache off;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
    }

    location /ws {
        proxy_pass http://${zone}_ws;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $${zone}_connection_upgrade;
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Cluster-Secret "";
        proxy_buffering off;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
    }

${auth('/validateSession', 'POST')}
${auth('/IsValidSession', 'GET')}
${auth('/web/logoutS', 'POST')}
${auth('/auth/refresh', 'POST')}
${auth('/auth/magic/request', 'POST')}
${auth('/auth/magic/verify', 'GET POST')}
    location ~ ^/auth/(discord|google)/(url|callback)$ {
        limit_req zone=${zone}_auth burst=10 nodelay;
        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        ${nextUpstream}
    }
    location = /api_user_data {
        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        ${nextUpstream}
    }

    location = /health {
        access_log off;
        proxy_pass http://${zone}_http;
        ${proxyHeaders}
        ${nextUpstream}
    }

    location /registry/ {
        proxy_pass http://${zone}_registry/;
        ${proxyHeaders}
        ${nextUpstream}
        proxy_request_buffering off;
    }

    location /mcp {
        proxy_pass http://${zone}_mcp;
        ${proxyHeaders}
        ${nextUpstream}
        proxy_buffering off;
        proxy_read_timeout 3600s;
    }

${
  input.adminEnabled === false
    ? adminDisabled(input.htpasswdPath)
    : `    location ^~ /admin/manager/ {
        auth_basic "Toolbox worker manager";
        auth_basic_user_file ${input.htpasswdPath};
        # Refused before the secret is added (and before basic auth: the rewrite phase runs first).
        default_type application/json;
        if ($${zone}_cross_site_change) {
            return 403 '{"code":"FORBIDDEN","message":"Cross-site request refused: the admin UI changes state only for its own pages","detail":null,"request_id":null}';
        }
        proxy_pass http://${address(input.manager.host, input.manager.port)}/;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header Authorization "";
        proxy_set_header X-Cluster-Secret ${quoted(input.managerSecret)};
    }`
}
}
`;
}

/** No credentials file: the admin UI answers 401 with the fix. */
function adminDisabled(htpasswdPath: string): string {
  return `    # The admin UI is disabled: ${htpasswdPath} is missing (tb workers nginx-config --write-htpasswd).
    location ^~ /admin/manager/ {
        default_type application/json;
        add_header WWW-Authenticate 'Basic realm="Toolbox worker manager"' always;
        return 401 '{"code":"UNAUTHORIZED","message":"The admin UI has no credentials file: run tb workers nginx-config --write-htpasswd","detail":null,"request_id":null}';
    }`;
}
