import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';

/** The prefix readMultipart gives each upload's staging directory. */
export const STAGING_PREFIX = 'tb-upload-';

/**
 * Who staged an upload: the process id, the process's start time (so a recycled pid is not mistaken for the
 * owner) and the machine's boot (pids restart with every boot). Written into the staging directory's name,
 * so a sweeper in any process sharing DATA_DIR can tell a dead owner's leftovers from a live upload.
 */
export interface StagingOwner {
  pid: number;
  /** Clock ticks since boot when the process started (/proc/<pid>/stat field 22); 0 where unknown. */
  startTicks: number;
  bootId: string;
}

let cachedBootId: string | null = null;

/**
 * The kernel's boot id on Linux; elsewhere the boot time to the minute, which is the same for every process
 * of one boot and differs after a reboot.
 */
export function currentBootId(): string {
  if (cachedBootId !== null) return cachedBootId;
  try {
    cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().toLowerCase();
  } catch {
    cachedBootId = '';
  }
  if (!/^[0-9a-f-]{8,64}$/.test(cachedBootId)) {
    cachedBootId = `t${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
  }
  return cachedBootId;
}

/** The start time of a process in clock ticks since boot, or 0 when /proc does not say (not Linux, or gone). */
export function processStartTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : 0;
  } catch {
    return 0;
  }
}

let cachedSelf: StagingOwner | null = null;

export function currentStagingOwner(): StagingOwner {
  if (cachedSelf?.pid !== process.pid) {
    cachedSelf = { pid: process.pid, startTicks: processStartTicks(process.pid), bootId: currentBootId() };
  }
  return cachedSelf;
}

/** `tb-upload-<pid>.<startTicks>.<bootId>.`: mkdtemp appends six random characters. */
export function stagingPrefix(owner: StagingOwner = currentStagingOwner()): string {
  return `${STAGING_PREFIX}${owner.pid}.${owner.startTicks}.${owner.bootId}.`;
}

const OWNED_NAME = /^tb-upload-(\d+)\.(\d+)\.([0-9a-z-]+)\.[^.]+$/;

/** The owner a staging directory's name records, or null for a name without one (an older release's). */
export function stagingOwnerOf(name: string): StagingOwner | null {
  const match = OWNED_NAME.exec(name);
  if (!match) return null;
  return { pid: Number(match[1]), startTicks: Number(match[2]), bootId: match[3] };
}

/**
 * Whether two boot ids name the same boot. The fallback (boot time in minutes) is computed from the clock and the
 * uptime by each process, so two processes of one boot may round to neighbouring minutes.
 */
export function sameBoot(a: string, b: string): boolean {
  if (a === b) return true;
  const minutes = /^t(\d+)$/;
  const [ma, mb] = [minutes.exec(a), minutes.exec(b)];
  return ma !== null && mb !== null && Math.abs(Number(ma[1]) - Number(mb[1])) <= 1;
}

/**
 * Whether the process that staged an upload still runs: same boot, the pid exists and (where both are known)
 * started at the recorded time. A process of another user answers EPERM: it exists.
 */
export function isStagingOwnerAlive(owner: StagingOwner): boolean {
  if (!sameBoot(owner.bootId, currentBootId())) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.startTicks === 0) return true;
  const startTicks = processStartTicks(owner.pid);
  return startTicks === 0 || startTicks === owner.startTicks;
}
