import { resolve } from 'node:path';
import { loadConfig } from '../config/config.js';
import { ModsClient } from '../modules/mods/index.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

const USAGE = `usage: tb mods install NAME[@RANGE] [--registry URL] [--token T]
       tb mods list [--json]
       tb mods remove NAME
       tb mods update [NAME] [--registry URL] [--token T]
       tb mods publish DIR [--registry URL] [--token T] [--changelog TEXT]`;

/** `tb mods install|list|remove|update|publish`: mods from the package registry into MODS_DIR. */
export async function runModsCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    registry: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean', default: false },
    changelog: { type: 'string' },
    'data-dir': { type: 'string' },
  });
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const client = new ModsClient({
    registryUrl: values.registry ?? config.modsRegistry.url,
    token: values.token ?? config.modsRegistry.token,
    modsDir: config.appCore.modsDir,
    hostVersion: config.version,
    zipLimits: config.registry.zipLimits,
  });
  const print = (data: unknown, text: string) => io.out(values.json ? JSON.stringify(data) : text);

  return reportingDomainErrors(io, async () => {
    switch (action) {
      case 'install': {
        const [requirement] = positionals;
        if (!requirement || positionals.length > 1) throw new UsageError(USAGE);
        const report = await client.install(requirement);
        for (const warning of report.warnings) io.err(`warning: ${warning}`);
        print(
          report,
          report.mods
            .map((mod) => `${mod.status === 'installed' ? 'installed' : 'up to date'} ${mod.name}@${mod.version}`)
            .join('\n'),
        );
        return 0;
      }
      case 'list': {
        if (positionals.length > 0) throw new UsageError(USAGE);
        const mods = await client.list();
        const text =
          mods.length === 0
            ? `no mods installed in ${config.appCore.modsDir}`
            : mods
                .map(
                  (mod) =>
                    `${mod.name}@${mod.version}  ${mod.checksum_sha256.slice(0, 12)}  ${mod.registry}  ${mod.installed_at}${mod.present ? '' : '  (missing)'}`,
                )
                .join('\n');
        print(mods, text);
        return 0;
      }
      case 'remove': {
        const [name] = positionals;
        if (!name || positionals.length > 1) throw new UsageError(USAGE);
        const removed = await client.remove(name);
        print(removed, `removed ${removed.name}@${removed.version}`);
        return 0;
      }
      case 'update': {
        if (positionals.length > 1) throw new UsageError(USAGE);
        const report = await client.update(positionals[0]);
        const lines = [
          ...report.updated.map((mod) => `updated ${mod.name} ${mod.from} -> ${mod.to}`),
          ...report.current.map((mod) => `up to date ${mod.name}@${mod.version}`),
          ...report.failed.map((mod) => `not updated ${mod.name}: ${mod.error}`),
        ];
        print(report, lines.join('\n') || 'no mods installed');
        return report.failed.length > 0 ? 1 : 0;
      }
      case 'publish': {
        const [directory] = positionals;
        if (!directory || positionals.length > 1) throw new UsageError(USAGE);
        const report = await client.publish(resolve(directory), { changelog: values.changelog });
        print(
          report,
          `published ${report.package}@${report.version}${report.created ? ' (package created)' : ''}, ${report.size} bytes, sha256 ${report.checksum_sha256}`,
        );
        return 0;
      }
      default:
        throw new UsageError(USAGE);
    }
  });
}
