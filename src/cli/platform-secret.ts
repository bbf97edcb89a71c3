import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `tb up` on a fresh clone: without PLATFORM_JWT_SECRET, a secret is generated once and kept in the
 * data directory, readable by its owner only, so tokens stay valid across restarts.
 */
export async function ensurePersistedSecret(dataDir: string): Promise<string> {
  const path = join(dataDir, 'jwt-secret');
  try {
    const existing = (await readFile(path, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}
