/**
 * JSON with object keys sorted at every depth, so equal arguments give equal cache keys
 * whatever order the caller wrote them in. `undefined` members are dropped as JSON does;
 * binary data is written as base64 so it can key a cache too.
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(normalise(value)) ?? 'null';
}

function normalise(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return `${value}n`;
    return value;
  }
  if (value instanceof Uint8Array) return { $binary: Buffer.from(value).toString('base64') };
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : normalise(item)));
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return normalise((value as { toJSON(): unknown }).toJSON());
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined && typeof member !== 'function') sorted[key] = normalise(member);
  }
  return sorted;
}
