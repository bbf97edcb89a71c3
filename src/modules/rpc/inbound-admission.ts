import { isIPv4, isIPv6 } from 'node:net';

/** Limits on inbound connections before the remote peer has proven its identity (per remote address). */
export interface InboundLimits {
  /** Connections one address may have open at once (in their upgrade or upgraded). */
  maxConnectionsPerAddress: number;
  /** Connections one address may have in the upgrade (Noise handshake, muxer selection) at once. */
  maxPendingPerAddress: number;
  /** New connections one address may open per second. */
  connectionsPerSecond: number;
  /** New connections per second for an address an allowed peer has recently completed a handshake from. */
  allowedPeerConnectionsPerSecond: number;
  /** How long an address keeps the allowed peers' rate after such a handshake, in milliseconds. */
  allowedAddressTtlMs: number;
}

export type Admission = { admitted: true; key: string } | { admitted: false; reason: string };

/** Past this many tracked addresses, expired entries are swept on the next admission. */
const SWEEP_ABOVE = 4096;

/**
 * The key limits are counted under: an IPv4 address itself (also written IPv4-mapped), an IPv6 address's
 * /64 prefix, since one host or home network is routinely given a whole /64 and could otherwise rotate
 * through fresh addresses at will.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIPv4(address) || !isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Admission of inbound connections by remote address, before the handshake names the peer: at most
 * `maxConnectionsPerAddress` open connections per address (so one address cannot take every connection
 * of the node), at most `maxPendingPerAddress` of them in their upgrade (so it cannot take every pending
 * slot either) and at most `connectionsPerSecond` new connections per address and second, raised to
 * `allowedPeerConnectionsPerSecond` for an address an allowed peer has connected from within
 * `allowedAddressTtlMs` (a consumer starting many `tb rpc call` processes at once). Pure: the caller tells
 * it when an upgrade finishes (`upgraded`), when a connection closes (`closed`) and when an allowed peer finished a handshake (`vouch`).
 */
export class InboundAdmission {
  private readonly pending = new Map<string, number>();
  private readonly open = new Map<string, number>();
  private readonly windows = new Map<string, { startedAt: number; count: number }>();
  private readonly allowedUntil = new Map<string, number>();

  constructor(
    private readonly limits: InboundLimits,
    private readonly now: () => number = Date.now,
  ) {}

  admit(address: string): Admission {
    const key = addressKey(address);
    const now = this.now();
    if (this.windows.size > SWEEP_ABOVE || this.allowedUntil.size > SWEEP_ABOVE) this.sweep(now);
    const open = this.open.get(key) ?? 0;
    if (open >= this.limits.maxConnectionsPerAddress)
      return { admitted: false, reason: `${open} connections from ${key} are open` };
    const pending = this.pending.get(key) ?? 0;
    if (pending >= this.limits.maxPendingPerAddress)
      return { admitted: false, reason: `${pending} connections from ${key} are still in their upgrade` };
    const allowed = (this.allowedUntil.get(key) ?? 0) > now;
    const rate = allowed ? this.limits.allowedPeerConnectionsPerSecond : this.limits.connectionsPerSecond;
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= 1000) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= rate) return { admitted: false, reason: `${key} opened ${rate} connections this second` };
    window.count++;
    this.pending.set(key, pending + 1);
    this.open.set(key, open + 1);
    return { admitted: true, key };
  }

  /** A connection admitted under `key` finished its upgrade: it no longer holds a pending slot. */
  upgraded(key: string): void {
    decrement(this.pending, key);
  }

  /** A connection admitted under `key` closed; `pending`: before its upgrade finished. */
  closed(key: string, pending: boolean): void {
    if (pending) decrement(this.pending, key);
    decrement(this.open, key);
  }

  /** An allowed peer completed a handshake from `address`: it gets the allowed peers' rate for a while. */
  vouch(address: string): void {
    this.allowedUntil.set(addressKey(address), this.now() + this.limits.allowedAddressTtlMs);
  }

  /** Connections of an address in their upgrade, and open in all (for tests and diagnostics). */
  countsOf(address: string): { pending: number; open: number } {
    const key = addressKey(address);
    return { pending: this.pending.get(key) ?? 0, open: this.open.get(key) ?? 0 };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.startedAt >= 1000) this.windows.delete(key);
    for (const [key, until] of this.allowedUntil) if (until <= now) this.allowedUntil.delete(key);
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const count = (counts.get(key) ?? 0) - 1;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
}
