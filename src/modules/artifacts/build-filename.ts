/** Object keys and URLs carry only `A-Za-z0-9._-`, so a key reads the same signed, encoded and decoded. */
export function keySegment(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The client's file name without any directory, in safe characters; null when it says nothing. */
export function safeFilename(original: string | undefined): string | null {
  const base = (original ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = keySegment(base)
    .replace(/_+/g, '_')
    .replace(/^[._]+/, '');
  if (!cleaned || cleaned === 'upload') return null;
  if (cleaned.length <= 200) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 && cleaned.length - dot <= 20 ? cleaned.slice(dot) : '';
  return cleaned.slice(0, 200 - extension.length) + extension;
}
