import { FootprintTracker, type Footprint } from '../modules/app-core/index.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

/** `tb footprint [--json]`: resource metrics of this process from the operating system's counters. */
export async function runFootprintCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean', default: false } }, { allowPositionals: false });
  const footprint = await new FootprintTracker().footprint({ updateTracking: true });
  io.out(values.json ? JSON.stringify(footprint) : formatFootprint(footprint));
  return 0;
}

function formatFootprint(footprint: Footprint): string {
  const optional = (value: number | null) => (value === null ? 'n/a' : String(value));
  return [
    `uptime     ${footprint.uptime.formatted} (${footprint.uptime.seconds} s)`,
    `memory     ${footprint.memory.current_mb} MB (min ${footprint.memory.min_mb}, max ${footprint.memory.max_mb}, heap ${footprint.memory.heap_used_mb})`,
    `cpu        ${footprint.cpu.percent_current} % (avg ${footprint.cpu.percent_avg}, user ${footprint.cpu.user_seconds} s, system ${footprint.cpu.system_seconds} s)`,
    `disk       read ${footprint.disk.read_mb} MB, written ${footprint.disk.write_mb} MB`,
    `network    received ${footprint.network.received_mb} MB, sent ${footprint.network.sent_mb} MB`,
    `process    pid ${footprint.process.pid}, threads ${optional(footprint.process.threads)}, open files ${optional(footprint.process.open_files)}, connections ${optional(footprint.process.connections)}`,
  ].join('\n');
}
