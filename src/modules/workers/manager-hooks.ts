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
}

/** A host:port that nginx lists as a `backup` server of the HTTP upstream (a healthy remote worker). */
export interface BackupServer {
  host: string;
  port: number;
}

export interface ProxyControl {
  status(): Promise<ProxyStatus>;
  /** `nginx -t`, then `nginx -s reload`. */
  reload(): Promise<ProxyReloadResult>;
  /** Rewrites the site config with these backup servers, then reloads. */
  rewrite(backups: BackupServer[]): Promise<ProxyReloadResult>;
  /** Rewrites the site config so only these ports get traffic (the rest are `down`), then reloads. */
  sync(live: { httpUp: number[]; wsUp: number[] }): Promise<ProxyReloadResult>;
}

/** No reverse proxy set up: workers are reached on their own ports. */
export class NoProxy implements ProxyControl {
  constructor(private readonly reason = 'nginx is not set up (see docs/workers.md § nginx)') {}
  status(): Promise<ProxyStatus> {
    return Promise.resolve({ installed: false, version: null, configured: false, site_path: null });
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
