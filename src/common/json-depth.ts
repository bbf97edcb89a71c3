/** How deep a JSON body may nest; deeper answers 400 before validation walks it (recursively). */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests arrays/objects deeper than `limit`; iterative, so hostile input cannot overflow it. */
export function jsonDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
