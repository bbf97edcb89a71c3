import { loadConfig } from '../config/config.js';
import { NetworkProbe } from '../modules/app-core/index.js';
import { appCoreOptionsFrom } from '../apps/app-core.app-module.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

/**
 * `tb probe ping|geo [--json]`: picks a platform server (PLATFORM_BASE on :5000, :8001,
 * PLATFORM_BASE_PORT, else PLATFORM_REMOTE_BASE) and measures round trips or asks its geolocation.
 */
export async function runProbeCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...rest] = argv;
  const { values } = parseCommandArgs(rest, { json: { type: 'boolean', default: false } }, { allowPositionals: false });
  if (action !== 'ping' && action !== 'geo') throw new UsageError('usage: tb probe ping|geo [--json]');
  const probe = new NetworkProbe(appCoreOptionsFrom(loadConfig(io.env)).probe);
  return reportingDomainErrors(io, async () => {
    if (action === 'ping') {
      const measurement = await probe.ping();
      io.out(
        values.json
          ? JSON.stringify(measurement)
          : `${measurement.base}: ${measurement.average_ms} ms average over ${measurement.round_trips} round trips`,
      );
      return 0;
    }
    const geo = await probe.geo();
    io.out(
      values.json
        ? JSON.stringify(geo)
        : Object.entries(geo)
            .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
            .join('\n'),
    );
    return 0;
  });
}
