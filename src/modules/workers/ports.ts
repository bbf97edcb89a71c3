/** The pre-allocated ports of one worker type: `base … base + slots - 1` (the nginx upstream lists them all). */
export function portRange(base: number, slots: number): number[] {
  return Array.from({ length: slots }, (_, index) => base + index);
}

/** The lowest port of the range no worker holds, or null when every slot is taken. */
export function lowestFreePort(range: readonly number[], held: Iterable<number>): number | null {
  const taken = new Set(held);
  return range.find((port) => !taken.has(port)) ?? null;
}
