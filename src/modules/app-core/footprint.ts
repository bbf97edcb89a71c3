import { readFile, readdir, readlink } from 'node:fs/promises';

/** Resource metrics of this process (snake_case: this object goes on the wire as is). */
export interface Footprint {
  timestamp: string;
  platform: string;
  uptime: { seconds: number; formatted: string };
  memory: { current_mb: number; min_mb: number; max_mb: number; heap_used_mb: number };
  cpu: {
    percent_current: number;
    percent_min: number;
    percent_max: number;
    percent_avg: number;
    user_seconds: number;
    system_seconds: number;
    total_seconds: number;
  };
  disk: {
    read_mb: number;
    write_mb: number;
    read_min_mb: number;
    read_max_mb: number;
    write_min_mb: number;
    write_max_mb: number;
  };
  network: {
    received_mb: number;
    sent_mb: number;
    received_min_mb: number;
    received_max_mb: number;
    sent_min_mb: number;
    sent_max_mb: number;
  };
  process: {
    pid: number;
    threads: number | null;
    open_files: number | null;
    connections: number | null;
    status: string | null;
  };
}

interface Range {
  min: number;
  max: number;
}

export interface FootprintOptions {
  /** Root of the proc file system (tests point it at a fixture directory). */
  procRoot?: string;
}

const MEGABYTE = 1024 * 1024;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Measures this process from the operating system's own counters (`/proc` on Linux), read with
 * fs/promises so the event loop never blocks. Off Linux, counters /proc cannot give fall back to
 * Node's (`process.memoryUsage`, `process.cpuUsage`) or are null / 0.
 * With `updateTracking` the minima, maxima and the CPU average take this sample into account.
 */
export class FootprintTracker {
  private readonly procRoot: string;
  private lastCpu: { seconds: number; at: number } | undefined;
  private readonly ranges = new Map<string, Range>();
  private cpuSamples = 0;
  private cpuSum = 0;

  constructor(options: FootprintOptions = {}) {
    this.procRoot = options.procRoot ?? '/proc';
  }

  async footprint(options: { updateTracking?: boolean } = {}): Promise<Footprint> {
    const updateTracking = options.updateTracking ?? true;
    const [stat, status, io, descriptors, netDev] = await Promise.all([
      this.read('self/stat'),
      this.read('self/status'),
      this.read('self/io'),
      this.listDescriptors(),
      this.read('self/net/dev'),
    ]);
    const now = Date.now();
    const statFields = stat ? parseStat(stat) : undefined;
    const statusFields = status ? parseKeyValues(status) : {};
    const ticksPerSecond = 100; // USER_HZ is 100 on every Linux ABI Node supports
    const nodeCpu = process.cpuUsage();
    const userSeconds = statFields ? statFields.utime / ticksPerSecond : nodeCpu.user / 1e6;
    const systemSeconds = statFields ? statFields.stime / ticksPerSecond : nodeCpu.system / 1e6;
    const totalSeconds = userSeconds + systemSeconds;
    const previous = this.lastCpu;
    const cpuPercent =
      previous && now > previous.at
        ? Math.max(0, ((totalSeconds - previous.seconds) / ((now - previous.at) / 1000)) * 100)
        : 0;

    const rssKb = statusFields.VmRSS ? Number.parseInt(statusFields.VmRSS, 10) : Number.NaN;
    const memoryMb = Number.isFinite(rssKb) ? rssKb / 1024 : process.memoryUsage().rss / MEGABYTE;
    const ioFields = io ? parseKeyValues(io) : {};
    const readMb = Number(ioFields.read_bytes ?? 0) / MEGABYTE;
    const writeMb = Number(ioFields.write_bytes ?? 0) / MEGABYTE;
    const network = netDev ? parseNetDev(netDev) : { received: 0, sent: 0 };
    const receivedMb = network.received / MEGABYTE;
    const sentMb = network.sent / MEGABYTE;
    const connections = descriptors ? await this.countConnections(descriptors.socketInodes) : null;

    if (updateTracking) {
      this.lastCpu = { seconds: totalSeconds, at: now };
      if (previous) {
        this.cpuSamples++;
        this.cpuSum += cpuPercent;
        this.track('cpu', cpuPercent);
      }
      this.track('memory', memoryMb);
      this.track('read', readMb);
      this.track('write', writeMb);
      this.track('received', receivedMb);
      this.track('sent', sentMb);
    }
    const range = (name: string, current: number) => this.ranges.get(name) ?? { min: current, max: current };
    const uptimeSeconds = Math.round(process.uptime());
    return {
      timestamp: new Date(now).toISOString(),
      platform: process.platform,
      uptime: { seconds: uptimeSeconds, formatted: formatDuration(uptimeSeconds) },
      memory: {
        current_mb: round(memoryMb),
        min_mb: round(range('memory', memoryMb).min),
        max_mb: round(range('memory', memoryMb).max),
        heap_used_mb: round(process.memoryUsage().heapUsed / MEGABYTE),
      },
      cpu: {
        percent_current: round(cpuPercent, 1),
        percent_min: round(range('cpu', cpuPercent).min, 1),
        percent_max: round(range('cpu', cpuPercent).max, 1),
        percent_avg: round(this.cpuSamples > 0 ? this.cpuSum / this.cpuSamples : cpuPercent, 1),
        user_seconds: round(userSeconds),
        system_seconds: round(systemSeconds),
        total_seconds: round(totalSeconds),
      },
      disk: {
        read_mb: round(readMb),
        write_mb: round(writeMb),
        read_min_mb: round(range('read', readMb).min),
        read_max_mb: round(range('read', readMb).max),
        write_min_mb: round(range('write', writeMb).min),
        write_max_mb: round(range('write', writeMb).max),
      },
      network: {
        received_mb: round(receivedMb),
        sent_mb: round(sentMb),
        received_min_mb: round(range('received', receivedMb).min),
        received_max_mb: round(range('received', receivedMb).max),
        sent_min_mb: round(range('sent', sentMb).min),
        sent_max_mb: round(range('sent', sentMb).max),
      },
      process: {
        pid: process.pid,
        threads: statusFields.Threads ? Number.parseInt(statusFields.Threads, 10) : null,
        open_files: descriptors ? descriptors.count : null,
        connections,
        status: statusFields.State ?? null,
      },
    };
  }

  private track(name: string, value: number): void {
    const range = this.ranges.get(name);
    if (!range) this.ranges.set(name, { min: value, max: value });
    else {
      range.min = Math.min(range.min, value);
      range.max = Math.max(range.max, value);
    }
  }

  private async read(path: string): Promise<string | undefined> {
    try {
      return await readFile(`${this.procRoot}/${path}`, 'utf8');
    } catch {
      return undefined;
    }
  }

  private async listDescriptors(): Promise<{ count: number; socketInodes: Set<string> } | undefined> {
    let names: string[];
    try {
      names = await readdir(`${this.procRoot}/self/fd`);
    } catch {
      return undefined;
    }
    const targets = await Promise.all(
      names.map((name) => readlink(`${this.procRoot}/self/fd/${name}`).catch(() => '')),
    );
    const socketInodes = new Set<string>();
    for (const target of targets) {
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match) socketInodes.add(match[1]);
    }
    return { count: names.length, socketInodes };
  }

  /** TCP sockets of this process: entries of /proc/net/tcp{,6} whose inode is one of our descriptors. */
  private async countConnections(socketInodes: Set<string>): Promise<number> {
    if (socketInodes.size === 0) return 0;
    const tables = await Promise.all([this.read('net/tcp'), this.read('net/tcp6')]);
    let count = 0;
    for (const table of tables) {
      if (!table) continue;
      for (const line of table.split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields.length > 9 && socketInodes.has(fields[9])) count++;
      }
    }
    return count;
  }
}

/** utime and stime of /proc/<pid>/stat; the command name may contain spaces and parentheses. */
export function parseStat(text: string): { utime: number; stime: number } {
  const fields = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  // Fields after the name start at field 3 (state); utime and stime are fields 14 and 15.
  return { utime: Number(fields[11] ?? 0), stime: Number(fields[12] ?? 0) };
}

export function parseKeyValues(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) values[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return values;
}

/** Received and sent bytes summed over the interfaces of /proc/net/dev, loopback excluded. */
export function parseNetDev(text: string): { received: number; sent: number } {
  let received = 0;
  let sent = 0;
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim();
    if (name === 'lo') continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    received += fields[0] || 0;
    sent += fields[8] || 0;
  }
  return { received, sent };
}

export function formatDuration(totalSeconds: number): string {
  const days = Math.floor(totalSeconds / 86_400);
  const hours = Math.floor((totalSeconds % 86_400) / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = Math.floor(totalSeconds % 60);
  const clock = [hours, minutes, seconds].map((part) => String(part).padStart(2, '0')).join(':');
  return days > 0 ? `${days}d ${clock}` : clock;
}
