import {
  DRAIN_IDLE_CONNECTION_MS,
  PROXY_UPSTREAM_IDLE_SECONDS,
  WORKER_KEEP_ALIVE_TIMEOUT_MS,
} from '../../http-worker/upstream-keep-alive.js';
import { renderSiteConfig, type SiteConfigInput } from './site-config.js';

const input: SiteConfigInput = {
  siteName: 'toolbox',
  listenPort: 8080,
  serverName: '_',
  ipv6: false,
  deferredAccept: true,
  httpPorts: [8000, 8001, 8002, 8003],
  wsPorts: [8100, 8101],
  workerHost: '127.0.0.1',
  backups: [],
  registry: { host: '0.0.0.0', port: 4025 },
  mcp: { host: '127.0.0.1', port: 8765 },
  manager: { host: '127.0.0.1', port: 9005 },
  managerSecret: 'abc123',
  htpasswdPath: '/etc/nginx/toolbox_admin_htpasswd',
  clientMaxBodyBytes: 104857600,
  logDir: '/var/log/nginx',
  apiRatePerSecond: 20,
};

describe('renderSiteConfig', () => {
  it('lists every pre-allocated HTTP port in a least_conn upstream with the passive check', () => {
    const text = renderSiteConfig(input);
    expect(text).toMatch(/upstream toolbox_http \{\n {4}least_conn;/);
    for (const port of input.httpPorts) expect(text).toContain(`server 127.0.0.1:${port} max_fails=1 fail_timeout=1s;`);
    expect(text).toContain('keepalive 64;');
  });

  it("shares the HTTP upstream's state between nginx's worker processes", () => {
    const text = renderSiteConfig(input);
    expect(text).toMatch(/upstream toolbox_http \{[^}]*\n {4}zone toolbox_http 256k;\n/);
  });

  it('marks no port down: a port without a worker refuses the connect and nginx tries the next one', () => {
    const text = renderSiteConfig(input);
    expect(text).not.toMatch(/\bdown;/);
    // Every worker port skipped for 1 s after a refused connect; this node's registry and MCP transport for 5 s.
    const slots = text.match(/server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=1s;/g)!;
    expect(slots).toHaveLength(input.httpPorts.length + input.wsPorts.length);
    expect(text.match(/server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=5s;/g)).toHaveLength(2);
    expect(text).toMatch(/location \/api\/ \{[^}]*proxy_next_upstream error /);
  });

  it('closes idle worker connections sooner than the workers do, so nginx never sends on one a worker closed', () => {
    const text = renderSiteConfig(input);
    expect(text).toMatch(/upstream toolbox_http \{[^}]*keepalive_timeout 4s;/);
    expect(PROXY_UPSTREAM_IDLE_SECONDS * 1000).toBeLessThan(WORKER_KEEP_ALIVE_TIMEOUT_MS);
    expect(DRAIN_IDLE_CONNECTION_MS).toBeGreaterThan(PROXY_UPSTREAM_IDLE_SECONDS * 1000);
  });

  it('adds healthy remote workers as backup servers', () => {
    const text = renderSiteConfig({ ...input, backups: [{ host: '10.0.0.7', port: 8000 }] });
    expect(text).toContain('server 10.0.0.7:8000 max_fails=1 fail_timeout=5s backup;');
  });

  it('proxies the registry and MCP through upstreams whose backups are the other nodes’ services', () => {
    const text = renderSiteConfig({
      ...input,
      backups: [
        { host: '10.0.0.7', port: 4025, service: 'registry' },
        { host: '10.0.0.7', port: 8765, service: 'mcp' },
      ],
    });
    expect(text).toMatch(
      /upstream toolbox_registry \{\n {4}server 127\.0\.0\.1:4025 max_fails=1 fail_timeout=5s;\n {4}server 10\.0\.0\.7:4025 max_fails=1 fail_timeout=5s backup;\n\}/,
    );
    expect(text).toMatch(
      /upstream toolbox_mcp \{\n {4}server 127\.0\.0\.1:8765 max_fails=1 fail_timeout=5s;\n {4}server 10\.0\.0\.7:8765 max_fails=1 fail_timeout=5s backup;\n\}/,
    );
    expect(text).toMatch(/location \/registry\/ \{\n {8}proxy_pass http:\/\/toolbox_registry\/;/);
    expect(text).toMatch(/location \/mcp \{\n {8}proxy_pass http:\/\/toolbox_mcp;/);
  });

  it('passes a registry or MCP request to a backup on a failed connect, and resends only idempotent ones after', () => {
    const text = renderSiteConfig(input);
    for (const location of ['/registry/', '/mcp']) {
      const block = new RegExp(`location ${location.replace(/\//g, '\\/')} \\{[^}]*\\}`).exec(text)![0];
      expect(block).toContain('proxy_next_upstream error timeout http_502 http_503;');
      expect(block).not.toContain('non_idempotent');
    }
  });

  it('keeps no idle connections to the registry and MCP, which close them on their own schedule', () => {
    const text = renderSiteConfig(input);
    expect(/upstream toolbox_registry \{[^}]*\}/.exec(text)![0]).not.toContain('keepalive');
    expect(/upstream toolbox_mcp \{[^}]*\}/.exec(text)![0]).not.toContain('keepalive');
  });

  it('lists no backup that repeats this node’s own service address', () => {
    const text = renderSiteConfig({ ...input, backups: [{ host: '127.0.0.1', port: 4025, service: 'registry' }] });
    expect(/upstream toolbox_registry \{[^}]*\}/.exec(text)![0]).not.toContain('backup');
  });

  it('routes WebSockets by a consistent hash with upgrade headers and long timeouts', () => {
    const text = renderSiteConfig(input);
    expect(text).toMatch(/upstream toolbox_ws \{\n {4}hash \$request_uri consistent;/);
    expect(text).toMatch(/location \/ws \{[^}]*proxy_set_header Upgrade \$http_upgrade;[^}]*proxy_read_timeout 3600s;/);
  });

  it('proxies the registry (prefix stripped), the MCP transport and the auth endpoints', () => {
    const text = renderSiteConfig(input);
    expect(text).toContain('location /registry/ {\n        proxy_pass http://toolbox_registry/;');
    expect(text).toContain('upstream toolbox_registry {\n    server 127.0.0.1:4025 max_fails=1 fail_timeout=5s;');
    expect(text).toContain('location /mcp {\n        proxy_pass http://toolbox_mcp;');
    expect(text).toContain('upstream toolbox_mcp {\n    server 127.0.0.1:8765 max_fails=1 fail_timeout=5s;');
    for (const path of ['/validateSession', '/IsValidSession', '/web/logoutS', '/auth/magic/verify'])
      expect(text).toContain(`location = ${path} {`);
  });

  it('guards the admin UI with basic auth and adds the manager secret only there', () => {
    const text = renderSiteConfig(input);
    expect(text).toMatch(
      /location \^~ \/admin\/manager\/ \{\n {8}auth_basic "Toolbox worker manager";\n {8}auth_basic_user_file \/etc\/nginx\/toolbox_admin_htpasswd;/,
    );
    expect(text).toContain('proxy_set_header X-Cluster-Secret "abc123";');
    // Every other location clears a client-sent secret.
    expect(text.match(/X-Cluster-Secret ""/g)!.length).toBeGreaterThan(5);
  });

  it('refuses a cross-site state change at the admin UI before the secret is added', () => {
    const text = renderSiteConfig(input);
    expect(text).toContain(
      'map "$request_method|$http_sec_fetch_site|$http_origin|$http_host" $toolbox_cross_site_change',
    );
    const admin = text.slice(text.indexOf('location ^~ /admin/manager/'));
    expect(admin).toMatch(/if \(\$toolbox_cross_site_change\) \{\n {12}return 403 '\{"code":"FORBIDDEN"/);
  });

  it('answers 401 JSON for the admin UI while the credentials file is missing', () => {
    const text = renderSiteConfig({ ...input, adminEnabled: false });
    expect(text).not.toContain('auth_basic_user_file');
    expect(text).not.toContain('abc123');
    expect(text).toContain('return 401 \'{"code":"UNAUTHORIZED"');
  });

  it('keeps a hostile secret inside its quotes', () => {
    expect(renderSiteConfig({ ...input, managerSecret: 'a";\n return 200 "$x' })).toContain(
      'X-Cluster-Secret "a; return 200 x";',
    );
  });

  it('answers nginx-generated 429 and 502 as JSON in the platform error shape', () => {
    const text = renderSiteConfig(input);
    expect(text).toContain('error_page 429 = @rate_limited;');
    expect(text).toContain('error_page 502 503 504 = @unavailable;');
    expect(text).toContain(`client_max_body_size 104857600;`);
  });

  it('limits /api/ per client address at the configured rate, and not at all with rate 0', () => {
    expect(renderSiteConfig(input)).toContain('zone=toolbox_api:10m rate=20r/s;');
    expect(renderSiteConfig(input)).toMatch(/location \/api\/ \{\n {8}limit_req zone=toolbox_api burst=200 nodelay;/);
    const open = renderSiteConfig({ ...input, apiRatePerSecond: 0 });
    expect(open).not.toContain('toolbox_api');
    expect(open).toContain('zone=toolbox_auth:10m rate=5r/s;');
  });

  it('retries a refused connection on every other server and streams /sse/ unbuffered', () => {
    const text = renderSiteConfig(input);
    expect(text).toContain('proxy_next_upstream error timeout http_502 http_503;');
    expect(text).not.toContain('proxy_next_upstream_tries');
    expect(text).toMatch(/location \/sse\/ \{[^}]*proxy_buffering off;/);
    expect(text).toMatch(/location = \/health \{\n {8}access_log off;/);
    for (const header of ['X-Frame-Options SAMEORIGIN', 'X-Content-Type-Options nosniff', 'Referrer-Policy'])
      expect(text).toContain(`add_header ${header}`);
  });

  it('accepts a connection only once its request arrived (deferred) where the platform has it', () => {
    expect(renderSiteConfig(input)).toContain('    listen 8080 deferred;\n');
    expect(renderSiteConfig({ ...input, deferredAccept: false })).toContain('    listen 8080;\n');
  });
});
