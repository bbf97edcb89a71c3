import { isIP } from 'node:net';
import { normaliseAddress } from '../app-core/index.js';

/** The connection limits of one WS worker process. */
export interface ConnectionLimits {
  /** WS_MAX_CONNECTIONS: every connection, open or in its handshake. */
  total: number;
  /** WS_MAX_CONNECTIONS_PER_IP: connections of one client address (an IPv6 client: its /64). */
  perAddress: number;
  /** WS_MAX_CONNECTIONS_PER_USER: connections of one signed-in user, from any address. */
  perUser: number;
  /** Most connections without a signed-in user (WS_ANONYMOUS_MAX_PERCENT of `total`); the rest wait for users. */
  anonymous: number;
}

/**
 * Why a connection gets no slot: the worker is full (`overloaded`), its address or its user has as many as one
 * may hold, or it is anonymous and only the slots kept for signed-in users are left.
 */
export type SlotRefusal = 'overloaded' | 'address' | 'user' | 'anonymous';

/** One connection's hold on the counters, from its handshake until it closes. */
export interface ConnectionSlot {
  /**
   * Counts the connection as `userId`'s (null: anonymous) once its credential is known; a refusal leaves the slot
   * as it was (the caller releases it).
   */
  assign(userId: string | null): SlotRefusal | null;
  /** Frees everything the slot counts; idempotent. */
  release(): void;
}

/**
 * The connections of one worker process counted by client address, by user and anonymous, so that no client
 * (one address, one account, or everyone without one) can take every slot. Pure: the worker reserves a slot per
 * handshake and releases it when the handshake is abandoned or the connection closes.
 */
export class ConnectionSlots {
  private total = 0;
  private anonymous = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly byUser = new Map<string, number>();

  constructor(private readonly limits: ConnectionLimits) {}

  /** Connections counted: open and in their handshake. */
  get size(): number {
    return this.total;
  }

  /**
   * Takes a slot for a handshake from `address` (an address key, `addressKey`) before its credential is checked:
   * counted at once, so concurrent handshakes cannot all slip under a limit.
   */
  reserve(address: string): ConnectionSlot | SlotRefusal {
    if (this.total >= this.limits.total) return 'overloaded';
    if ((this.byAddress.get(address) ?? 0) >= this.limits.perAddress) return 'address';
    this.total += 1;
    increment(this.byAddress, address);
    let released = false;
    let counted: { user: string } | { anonymous: true } | null = null;
    return {
      assign: (userId) => {
        if (released || counted) return null;
        if (userId === null) {
          if (this.anonymous >= this.limits.anonymous) return 'anonymous';
          this.anonymous += 1;
          counted = { anonymous: true };
        } else {
          if ((this.byUser.get(userId) ?? 0) >= this.limits.perUser) return 'user';
          increment(this.byUser, userId);
          counted = { user: userId };
        }
        return null;
      },
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        decrement(this.byAddress, address);
        if (counted && 'user' in counted) decrement(this.byUser, counted.user);
        else if (counted) this.anonymous -= 1;
      },
    };
  }
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/**
 * The key a client address is counted under: an IPv4 address as is (also when written IPv4-mapped), an IPv6
 * address by its /64 — one subscriber usually holds a whole /64, so counting single IPv6 addresses would let one
 * client open a connection from each of 2^64 of them.
 */
export function addressKey(address: string): string {
  const ip = normaliseAddress(address).replace(/%.*$/, '');
  if (isIP(ip) !== 6) return ip;
  return `${ipv6Groups(ip)
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function ipv6Groups(ip: string): number[] {
  const parse = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((piece) => {
          if (!piece.includes('.')) return [parseInt(piece, 16)];
          const [a, b, c, d] = piece.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = ip.indexOf('::');
  if (gap < 0) return parse(ip);
  const head = parse(ip.slice(0, gap));
  const tail = parse(ip.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
