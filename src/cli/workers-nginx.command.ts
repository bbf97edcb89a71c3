import { stat } from 'node:fs/promises';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import {
  NginxProxyControl,
  findNginx,
  loadManagerSecret,
  nginxPaths,
  nginxVersion,
  patchMainConfig,
  runningManager,
  siteInputFor,
  testAndReload,
  testConfig,
  writeHtpasswd,
  writeSite,
  type ProxyControl,
} from '../modules/workers/index.js';
import { parseCommandArgs } from './cli-args.js';
import type { CommandIo } from './command-io.js';

export const NGINX_SUBCOMMANDS = new Set(['nginx-init', 'nginx-config', 'nginx-check', 'nginx-reload']);

/** The manager's reverse proxy: nginx when installed (it acts only once `nginx-config` wrote the site). */
export async function proxyControlFor(config: PlatformConfig, secret: string): Promise<ProxyControl> {
  return new NginxProxyControl(config, secret, await findNginx(config));
}

const isFile = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
const isDirectory = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** `tb workers nginx-init | nginx-config [--write-htpasswd] [--force] | nginx-check [--patch] | nginx-reload`. */
export async function runNginxSubcommand(sub: string, argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      'data-dir': { type: 'string' },
      'write-htpasswd': { type: 'boolean' },
      force: { type: 'boolean' },
      patch: { type: 'boolean' },
    },
    { allowPositionals: false },
  );
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const binary = await findNginx(config);
  const paths = nginxPaths(config);
  const ok = (line: string) => io.out(`✓ ${line}`);
  const bad = (line: string) => io.out(`✗ ${line}`);

  if (sub === 'nginx-check') {
    const main = await isFile(paths.mainConfig);
    let included = false;
    if (main) included = (await patchMainConfigDryRun(config)) === 'present';
    if (main && !included && values.patch) included = (await patchMainConfig(config)) !== null;
    const lines: [boolean, string][] = [
      [true, `nginx.conf path: ${paths.mainConfig}`],
      [main, `conf exists: ${main ? 'yes' : 'no'}`],
      [included, `box-enabled include: ${included ? 'present' : 'MISSING (run tb workers nginx-init)'}`],
      [await isDirectory(paths.availableDir), `box-available dir: ${paths.availableDir}`],
      [await isDirectory(paths.enabledDir), `box-enabled dir: ${paths.enabledDir}`],
      [await isFile(paths.sitePath), `site config: ${paths.sitePath}`],
      [await isFile(paths.enabledPath), `site symlink: ${paths.enabledPath}`],
      [binary !== null, `nginx installed: ${binary ?? 'no'}`],
      [binary !== null, `nginx version: ${binary ? ((await nginxVersion(binary)) ?? 'n/a') : 'n/a'}`],
      [
        await isFile(paths.htpasswdPath),
        `htpasswd: ${(await isFile(paths.htpasswdPath)) ? paths.htpasswdPath : 'missing (run tb workers nginx-config --write-htpasswd)'}`,
      ],
    ];
    for (const [passed, line] of lines) (passed ? ok : bad)(line);
    return included && binary !== null ? 0 : 1;
  }

  if (sub === 'nginx-init') {
    if (!(await isFile(paths.mainConfig))) {
      bad(`nginx.conf not found at ${paths.mainConfig}`);
      return 1;
    }
    const outcome = await patchMainConfig(config);
    if (outcome === 'present') {
      ok(`${paths.mainConfig} already includes ${paths.enabledDir}/* — nothing to do`);
      return 0;
    }
    ok(`added "include ${paths.enabledDir}/*;" to ${paths.mainConfig} (backup: ${paths.mainConfig}.bak)`);
    if (!binary) {
      bad('nginx is not installed: reload it yourself once it is');
      return 1;
    }
    const reloaded = await testAndReload(config, binary);
    (reloaded.ok || reloaded.notRunning ? ok : bad)(reloaded.message);
    return reloaded.ok || reloaded.notRunning ? 0 : 1;
  }

  if (sub === 'nginx-config') {
    if (values['write-htpasswd']) {
      try {
        ok(`htpasswd written: ${await writeHtpasswd(config)} (user admin, mode 0640)`);
      } catch (error) {
        bad(`htpasswd not written: ${(error as Error).message} — is ADMIN_UI_PASSWORD set?`);
        return 1;
      }
    }
    if ((await isFile(paths.sitePath)) && !values.force) {
      ok(`site config kept: ${paths.sitePath} (exists; --force rewrites it)`);
    } else {
      const secret = await loadManagerSecret(config.dataDir, config.manager.clusterSecret);
      const written = await writeSite(config, siteInputFor(config, secret, await liveState(config)));
      ok(`site config written: ${written.path} (mode 0640${written.changed ? '' : ', unchanged'})`);
    }
    if (!binary) {
      bad('nginx is not installed: the config was written but not tested');
      return 1;
    }
    const tested = await testConfig(config, binary);
    (tested.ok ? ok : bad)(tested.ok ? 'nginx -t: configuration OK' : `nginx -t failed: ${tested.message}`);
    return tested.ok ? 0 : 1;
  }

  // nginx-reload
  if (!binary) {
    bad('nginx is not installed');
    return 1;
  }
  const reloaded = await testAndReload(config, binary);
  (reloaded.ok ? ok : bad)(reloaded.message);
  return reloaded.ok ? 0 : 1;
}

/** Whether the main config already includes the sites, without changing it. */
async function patchMainConfigDryRun(config: PlatformConfig): Promise<'present' | 'missing'> {
  const { readFile } = await import('node:fs/promises');
  return (await readFile(nginxPaths(config).mainConfig, 'utf8')).includes('box-enabled') ? 'present' : 'missing';
}

/**
 * The running manager's view (its state file): the port its API listens on, which may be past MANAGER_PORT when
 * that was taken. Which workers run does not matter: the site lists every pre-allocated port.
 */
async function liveState(config: PlatformConfig): Promise<{ managerPort?: number }> {
  const state = await runningManager(config);
  return state?.api ? { managerPort: Number(new URL(state.api).port) } : {};
}
