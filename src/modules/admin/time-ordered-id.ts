import { randomBytes } from 'node:crypto';

let lastMilliseconds = 0;
let sequence = 0;

/**
 * A UUID version 7: 48 bits of Unix milliseconds, then a 12-bit sequence and random bits. Ids made by
 * one process sort in creation order even within one millisecond, so "newest first" and "oldest first"
 * lists are stable where timestamps tie.
 */
export function timeOrderedId(now = Date.now()): string {
  if (now > lastMilliseconds) {
    lastMilliseconds = now;
    sequence = 0;
  } else {
    sequence += 1;
    if (sequence > 0xfff) {
      // More than 4096 ids in one millisecond: borrow the next millisecond rather than lose the order.
      lastMilliseconds += 1;
      sequence = 0;
    }
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMilliseconds, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
