import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The manager secret (`X-Cluster-Secret`): CLUSTER_SECRET when set (every node of a cluster shares it), else one
 * random secret kept in `DATA_DIR/manager-secret` (0600), so it survives restarts — the generated nginx site
 * config carries it for requests that passed basic auth.
 */
export async function loadManagerSecret(dataDir: string, clusterSecret: string | null): Promise<string> {
  if (clusterSecret) return clusterSecret;
  const path = join(dataDir, 'manager-secret');
  try {
    const stored = (await readFile(path, 'utf8')).trim();
    if (stored.length >= 32) return stored;
  } catch {
    // none yet
  }
  const secret = randomBytes(32).toString('hex');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}

// One constant-time comparison for the platform's secrets (the cluster-secret auth strategy uses it too).
export { secretsEqual } from '../../auth/secrets.js';
