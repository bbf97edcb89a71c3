import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FootprintTracker, formatDuration, parseNetDev, parseStat } from './footprint.js';

describe('footprint parsers', () => {
  it('reads utime and stime after a command name with spaces and parentheses', () => {
    expect(parseStat('42 (node (x) y) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0')).toEqual({ utime: 250, stime: 50 });
  });

  it('sums network bytes over interfaces except loopback', () => {
    const text =
      'Inter-|   Receive\n face |bytes packets\n    lo: 999 1 0 0 0 0 0 0 999 1\n  eth0: 1000 2 0 0 0 0 0 0 500 3\n  eth1: 24 1 0 0 0 0 0 0 12 1\n';
    expect(parseNetDev(text)).toEqual({ received: 1024, sent: 512 });
  });

  it('formats durations with days', () => {
    expect([formatDuration(59), formatDuration(90_061)]).toEqual(['00:00:59', '1d 01:01:01']);
  });
});

describe('FootprintTracker', () => {
  let procRoot: string;

  beforeAll(async () => {
    procRoot = await mkdtemp(join(tmpdir(), 'proc-'));
    await mkdir(join(procRoot, 'self', 'fd'), { recursive: true });
    await mkdir(join(procRoot, 'self', 'net'), { recursive: true });
    await mkdir(join(procRoot, 'net'), { recursive: true });
    await writeFile(join(procRoot, 'self', 'stat'), '1 (node) S 0 0 0 0 0 0 0 0 0 0 300 100 0 0');
    await writeFile(
      join(procRoot, 'self', 'status'),
      'Name:\tnode\nState:\tS (sleeping)\nVmRSS:\t  204800 kB\nThreads:\t7\n',
    );
    await writeFile(join(procRoot, 'self', 'io'), `read_bytes: ${5 * 1024 * 1024}\nwrite_bytes: ${2 * 1024 * 1024}\n`);
    await writeFile(join(procRoot, 'self', 'net', 'dev'), 'h1\nh2\n  eth0: 1048576 0 0 0 0 0 0 0 3145728 0\n');
    await symlink('socket:[111]', join(procRoot, 'self', 'fd', '3'));
    await symlink('socket:[222]', join(procRoot, 'self', 'fd', '4'));
    await symlink('/dev/null', join(procRoot, 'self', 'fd', '5'));
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    await writeFile(
      join(procRoot, 'net', 'tcp'),
      `${header}   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1\n   1: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 999 1\n`,
    );
  });

  afterAll(async () => {
    await rm(procRoot, { recursive: true, force: true });
  });

  it('reads memory, CPU seconds, threads, I/O and descriptors from the proc files', async () => {
    const footprint = await new FootprintTracker({ procRoot }).footprint();
    expect(footprint.memory.current_mb).toBe(200);
    expect([footprint.cpu.user_seconds, footprint.cpu.system_seconds, footprint.cpu.total_seconds]).toEqual([3, 1, 4]);
    expect([
      footprint.disk.read_mb,
      footprint.disk.write_mb,
      footprint.network.received_mb,
      footprint.network.sent_mb,
    ]).toEqual([5, 2, 1, 3]);
    expect(footprint.process).toMatchObject({
      pid: process.pid,
      threads: 7,
      open_files: 3,
      connections: 1,
      status: 'S (sleeping)',
    });
  });

  it('degrades to Node counters when /proc is missing', async () => {
    const footprint = await new FootprintTracker({ procRoot: join(procRoot, 'absent') }).footprint();
    expect(footprint.memory.current_mb).toBeGreaterThan(0);
    expect([footprint.process.threads, footprint.process.open_files, footprint.process.connections]).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('tracks minima and maxima only when updateTracking is on', async () => {
    const tracker = new FootprintTracker({ procRoot });
    await tracker.footprint();
    await writeFile(join(procRoot, 'self', 'status'), 'VmRSS:\t  409600 kB\nThreads:\t7\n');
    const untracked = await tracker.footprint({ updateTracking: false });
    const tracked = await tracker.footprint();
    expect([untracked.memory.current_mb, untracked.memory.max_mb]).toEqual([400, 200]);
    expect([tracked.memory.min_mb, tracked.memory.max_mb]).toEqual([200, 400]);
  });

  it('measures the real process on Linux', async () => {
    const footprint = await new FootprintTracker().footprint();
    expect(footprint.uptime.seconds).toBeGreaterThanOrEqual(0);
    expect(footprint.process.pid).toBe(process.pid);
    if (process.platform === 'linux') expect(footprint.process.threads).toBeGreaterThan(0);
  });
});
