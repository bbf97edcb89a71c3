import { execFile } from 'node:child_process';
import {
  access,
  chmod,
  chown,
  constants,
  mkdir,
  readFile,
  rename,
  stat,
  symlink,
  writeFile,
  lstat,
} from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { PlatformConfig } from '../../../config/config.js';
import type { BackupServer, ProxyControl, ProxyFrontDoor, ProxyReloadResult, ProxyStatus } from '../manager-hooks.js';
import { apr1 } from './apr1.js';
import { renderSiteConfig, type SiteConfigInput } from './site-config.js';

/** Where the site lives: `<conf>/box-available/<site>`, enabled by a symlink in `<conf>/box-enabled/`. */
export interface NginxPaths {
  confDir: string;
  mainConfig: string;
  availableDir: string;
  enabledDir: string;
  sitePath: string;
  enabledPath: string;
  htpasswdPath: string;
}

export function nginxPaths(config: PlatformConfig): NginxPaths {
  const confDir = config.manager.nginx.confDir;
  const site = config.manager.nginx.siteName;
  return {
    confDir,
    mainConfig: join(confDir, 'nginx.conf'),
    availableDir: join(confDir, 'box-available'),
    enabledDir: join(confDir, 'box-enabled'),
    sitePath: join(confDir, 'box-available', site),
    enabledPath: join(confDir, 'box-enabled', site),
    htpasswdPath: join(confDir, `${site}_admin_htpasswd`),
  };
}

const exists = (path: string) =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

/** The nginx binary: NGINX_BIN, then PATH, then the usual places; null when none is installed. */
export async function findNginx(config: PlatformConfig): Promise<string | null> {
  if (config.manager.nginx.bin) return (await exists(config.manager.nginx.bin)) ? config.manager.nginx.bin : null;
  const candidates = [
    // PATH is the operating system's search path for programs (what `which nginx` reads), not a platform setting.
    // eslint-disable-next-line no-restricted-properties
    ...(process.env.PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((dir) => join(dir, 'nginx')),
    '/usr/sbin/nginx',
    '/usr/local/sbin/nginx',
    '/usr/local/bin/nginx',
    '/opt/homebrew/bin/nginx',
  ];
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

function run(binary: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ ok: !error, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

/** `-p PREFIX` when set, and `-c <conf>/nginx.conf`: the same main config for test, reload and start. */
export function nginxArgs(config: PlatformConfig): string[] {
  const prefix = config.manager.nginx.prefix;
  return [...(prefix ? ['-p', prefix] : []), '-c', nginxPaths(config).mainConfig];
}

/** The rendered site for this configuration, secret and worker state. */
export function siteInputFor(
  config: PlatformConfig,
  secret: string,
  state: { backups?: BackupServer[]; managerPort?: number } = {},
): SiteConfigInput {
  const range = (base: number, slots: number) => Array.from({ length: slots }, (_, index) => base + index);
  return {
    siteName: config.manager.nginx.siteName,
    listenPort: config.manager.nginx.listenPort,
    serverName: config.manager.nginx.serverName,
    ipv6: false,
    deferredAccept: process.platform === 'linux',
    httpPorts: range(config.httpWorker.basePort, config.manager.httpPortSlots),
    wsPorts: range(config.wsWorker.basePort, config.manager.wsPortSlots),
    workerHost: config.httpWorker.host,
    backups: state.backups ?? [],
    registry: { host: config.registry.host, port: config.registry.port },
    mcp: { host: config.mcp.host, port: config.mcp.port },
    manager: { host: config.manager.host, port: state.managerPort ?? config.manager.port },
    managerSecret: secret,
    htpasswdPath: nginxPaths(config).htpasswdPath,
    clientMaxBodyBytes: Math.max(config.httpWorker.uploadMaxBytes, config.registry.uploadMaxBytes),
    logDir: config.manager.nginx.prefix ? join(config.manager.nginx.prefix, 'logs') : '/var/log/nginx',
    apiRatePerSecond: config.manager.nginx.apiRatePerSecond,
  };
}

/**
 * Writes the site file (0640: it carries the manager secret) atomically and enables it with the symlink. A file
 * that already holds this text is left alone and `changed` is false: there is nothing for nginx to reload.
 */
export async function writeSite(
  config: PlatformConfig,
  input: SiteConfigInput,
): Promise<{ path: string; changed: boolean }> {
  const paths = nginxPaths(config);
  await mkdir(paths.availableDir, { recursive: true });
  await mkdir(paths.enabledDir, { recursive: true });
  const adminEnabled = await exists(paths.htpasswdPath);
  const text = renderSiteConfig({ ...input, adminEnabled });
  const current = await readFile(paths.sitePath, 'utf8').catch(() => null);
  const changed = current !== text;
  if (changed) {
    const temporary = `${paths.sitePath}.tmp-${process.pid}`;
    await writeFile(temporary, text, { mode: 0o640 });
    await chmod(temporary, 0o640);
    await rename(temporary, paths.sitePath);
  }
  const linked = await lstat(paths.enabledPath).then(
    () => true,
    () => false,
  );
  if (!linked) await symlink(paths.sitePath, paths.enabledPath);
  return { path: paths.sitePath, changed };
}

/** `admin:<apr1 hash>` from ADMIN_UI_PASSWORD, mode 0640. */
export async function writeHtpasswd(config: PlatformConfig): Promise<string> {
  const password = config.manager.adminUiPassword;
  if (!password) throw new Error('ADMIN_UI_PASSWORD is not set');
  const path = nginxPaths(config).htpasswdPath;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `admin:${apr1(password)}\n`, { mode: 0o640 });
  await chmod(path, 0o640);
  // nginx's worker processes read the file at request time: as root, hand its group to nginx's `user`.
  const group = await nginxWorkerGroupId(config);
  if (group !== null && process.getuid?.() === 0) await chown(path, 0, group);
  return path;
}

/** The group id of the `user` the main config runs nginx's workers as (`user www-data;` on Debian), or null. */
export async function nginxWorkerGroupId(config: PlatformConfig): Promise<number | null> {
  let text: string;
  try {
    text = await readFile(nginxPaths(config).mainConfig, 'utf8');
  } catch {
    return null;
  }
  const match = /^\s*user\s+([A-Za-z0-9_.-]+)(?:\s+([A-Za-z0-9_.-]+))?\s*;/m.exec(text);
  if (!match) return null;
  const { ok, output } = await run('id', ['-g', match[2] ? match[1] : match[1]]);
  if (match[2]) {
    const group = await run('getent', ['group', match[2]]);
    const gid = Number(group.output.split(':')[2]);
    return group.ok && Number.isInteger(gid) ? gid : null;
  }
  return ok && /^\d+$/.test(output) ? Number(output) : null;
}

/** Adds `include <conf>/box-enabled/*;` before the last line that is only `}` (the http block's end), once. */
export async function patchMainConfig(config: PlatformConfig): Promise<'patched' | 'present'> {
  const paths = nginxPaths(config);
  const text = await readFile(paths.mainConfig, 'utf8');
  if (text.includes('box-enabled')) return 'present';
  const lines = text.split('\n');
  let last = -1;
  lines.forEach((line, index) => {
    if (line.trim() === '}') last = index;
  });
  if (last < 0) throw new Error(`no closing "}" of the http block found in ${paths.mainConfig}`);
  lines.splice(last, 0, '    # Toolbox Platform sites (tb workers nginx-init)', `    include ${paths.enabledDir}/*;`);
  await writeFile(`${paths.mainConfig}.bak`, text);
  await writeFile(paths.mainConfig, lines.join('\n'));
  return 'patched';
}

export async function nginxVersion(binary: string): Promise<string | null> {
  const result = await run(binary, ['-v']);
  return /nginx\/[\d.]+/.exec(result.output)?.[0] ?? null;
}

export async function testConfig(config: PlatformConfig, binary: string): Promise<ProxyReloadResult> {
  const result = await run(binary, [...nginxArgs(config), '-t']);
  return { ok: result.ok, message: result.output };
}

/**
 * `nginx -t`, then `nginx -s reload` (a graceful reload: old nginx workers finish their requests), then waits —
 * at most `handoverTimeoutMs` — until the master runs new workers and the old ones have exited: `-s reload`
 * only sends a signal, and until the old workers are gone they still route by the old config.
 */
export async function testAndReload(
  config: PlatformConfig,
  binary: string,
  handoverTimeoutMs = RELOAD_HANDOVER_TIMEOUT_MS,
): Promise<ProxyReloadResult> {
  const tested = await testConfig(config, binary);
  if (!tested.ok) return { ok: false, message: `config test failed — reload aborted: ${tested.message}` };
  const master = await nginxMasterPid(config);
  const before = master ? await childPids(master) : [];
  const reloaded = await run(binary, [...nginxArgs(config), '-s', 'reload']);
  if (reloaded.ok) {
    const handedOver = master ? await waitForHandover(master, before, handoverTimeoutMs) : false;
    return {
      ok: true,
      handedOver,
      message: handedOver ? 'nginx reloaded' : 'nginx reloaded (old nginx workers still finishing)',
    };
  }
  if (NOT_RUNNING.test(reloaded.output))
    return { ok: false, notRunning: true, message: 'nginx is not running (the configuration tested OK; start nginx)' };
  return { ok: false, message: `reload failed: ${reloaded.output}` };
}

/** Old nginx workers holding long requests or WebSockets may take longer; the manager goes on after this. */
const RELOAD_HANDOVER_TIMEOUT_MS = 10_000;

/** The master's pid from the main config's `pid` directive (default `<prefix>/logs/nginx.pid`, `/run/nginx.pid`). */
export async function nginxMasterPid(config: PlatformConfig): Promise<number | null> {
  const text = await readFile(nginxPaths(config).mainConfig, 'utf8').catch(() => '');
  const prefix = config.manager.nginx.prefix;
  const configured = /^\s*pid\s+([^;\s]+)\s*;/m.exec(text)?.[1];
  const path = configured
    ? isAbsolute(configured)
      ? configured
      : join(prefix ?? '/usr/share/nginx', configured)
    : prefix
      ? join(prefix, 'logs', 'nginx.pid')
      : '/run/nginx.pid';
  const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 1 ? pid : null;
}

/** The children of a process (Linux `/proc`); empty where that is not available. */
async function childPids(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** True once the master has a child it did not have before and none of the old children is left. */
async function waitForHandover(master: number, before: number[], timeoutMs: number): Promise<boolean> {
  // A master always has workers: none seen means /proc cannot tell (not Linux); the caller waits a fixed time.
  if (before.length === 0) return false;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await childPids(master);
    if (now.some((pid) => !before.includes(pid)) && !before.some((pid) => now.includes(pid))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What `nginx -s reload` says when no master process runs (no or empty pid file, stale pid). */
const NOT_RUNNING = /invalid PID number|No such process|open\(\) ".*\.pid" failed/;

/**
 * nginx for a running manager: set up when the binary exists and the site file was written (`nginx-config`).
 * The manager calls `sync` at start and around scaling and rolling updates; the site lists every pre-allocated port
 * whatever runs on it, so only a new manager port or new cluster backups change the file, and nginx is reloaded
 * only then.
 */
export class NginxProxyControl implements ProxyControl {
  private managerPort: number | undefined;
  private backups: BackupServer[] = [];

  constructor(
    private readonly config: PlatformConfig,
    private readonly secret: string,
    private readonly binary: string | null,
  ) {}

  setManagerPort(port: number): void {
    this.managerPort = port;
  }

  async status(): Promise<ProxyStatus> {
    const sitePath = nginxPaths(this.config).sitePath;
    const configured =
      this.binary !== null &&
      (await stat(sitePath).then(
        (s) => s.isFile(),
        () => false,
      ));
    return {
      installed: this.binary !== null,
      version: this.binary ? await nginxVersion(this.binary) : null,
      configured,
      site_path: configured ? sitePath : null,
    };
  }

  /**
   * The site listens on every address of `NGINX_LISTEN_PORT`, so loopback reaches it; a named site needs its name
   * as Host (a wildcard or regex name has none to send: nginx then picks the port's default server).
   */
  frontDoor(): ProxyFrontDoor {
    const [name] = this.config.manager.nginx.serverName.trim().split(/\s+/);
    const literal = name && name !== '_' && !name.startsWith('~') && !name.includes('*');
    return { host: '127.0.0.1', port: this.config.manager.nginx.listenPort, hostHeader: literal ? name : null };
  }

  reload(): Promise<ProxyReloadResult> {
    if (!this.binary) return Promise.resolve({ ok: false, message: 'nginx is not installed' });
    return testAndReload(this.config, this.binary);
  }

  sync(): Promise<ProxyReloadResult> {
    return this.rewriteAndReload();
  }

  async rewrite(backups: BackupServer[]): Promise<ProxyReloadResult> {
    this.backups = backups;
    return this.rewriteAndReload();
  }

  private async rewriteAndReload(): Promise<ProxyReloadResult> {
    if (!(await this.status()).configured) return { ok: false, message: 'nginx is not set up for this manager' };
    const { changed } = await writeSite(
      this.config,
      siteInputFor(this.config, this.secret, { backups: this.backups, managerPort: this.managerPort }),
    );
    if (!changed) return { ok: true, unchanged: true, message: 'site config unchanged, nginx not reloaded' };
    return this.reload();
  }
}
