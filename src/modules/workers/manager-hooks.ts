/**
 * The manager's two outward seams: the reverse proxy in front of the workers (nginx, when set up) and the other
 * nodes of a cluster. Each has a "nothing there" default so the manager runs the same without them.
 */

export interface ProxyStatus {
  installed: boolean;
  version: string | null;
  /** The generated site config exists (so reloads matter). */
  configured: boolean;
  site_path: string | null;
}

export interface ProxyReloadResult {
  ok: boolean;
  message: string;
  /** nginx has no running master process: nothing to reload (the config is read when it starts). */
  notRunning?: boolean;
  /** The reload is complete: new nginx workers run and every old one has exited. */
  handedOver?: boolean;
  /** The site config already said this: nothing was written and nginx was not reloaded. */
  unchanged?: boolean;
}

/**
 * A host:port that nginx lists as a `backup` server of one of the site's upstreams: a healthy HTTP worker of
 * another node, or (`service`) that node's registry or MCP transport.
 */
export interface BackupServer {
  host: string;
  port: number;
  /** Absent: an HTTP worker (the `_http` upstream). */
  service?: ClusterService;
}

/** The platform services besides the workers that a node's site fronts and another node can stand in for. */
export type ClusterService = 'registry' | 'mcp';

/** Where a node's registry and MCP transport listen (`GET cluster/services`). */
export type ServiceAddresses = Record<ClusterService, { host: string; port: number }>;

/** Where clients reach the HTTP workers through the proxy: the address to connect to and the Host to send. */
export interface ProxyFrontDoor {
  host: string;
  port: number;
  /** The site's server name when it names one (a catch-all site needs none). */
  hostHeader: string | null;
}

export interface ProxyControl {
  status(): Promise<ProxyStatus>;
  /** The generated site's front door on this machine, or null without a proxy. */
  frontDoor(): ProxyFrontDoor | null;
  /** `nginx -t`, then `nginx -s reload`. */
  reload(): Promise<ProxyReloadResult>;
  /** Rewrites the site config with these backup servers; reloads when that changed the file. */
  rewrite(backups: BackupServer[]): Promise<ProxyReloadResult>;
  /**
   * Rewrites the site config from what the manager knows (its port, the backups); reloads only when that changed
   * the file. Which workers run never changes it: every pre-allocated port is listed up (site-config.ts).
   */
  sync(): Promise<ProxyReloadResult>;
}

/** No reverse proxy set up: workers are reached on their own ports. */
export class NoProxy implements ProxyControl {
  constructor(private readonly reason = 'nginx is not set up (see docs/workers.md § nginx)') {}
  status(): Promise<ProxyStatus> {
    return Promise.resolve({ installed: false, version: null, configured: false, site_path: null });
  }
  frontDoor(): ProxyFrontDoor | null {
    return null;
  }
  reload(): Promise<ProxyReloadResult> {
    return Promise.resolve({ ok: false, message: this.reason });
  }
  rewrite(): Promise<ProxyReloadResult> {
    return this.reload();
  }
  sync(): Promise<ProxyReloadResult> {
    return this.reload();
  }
}
