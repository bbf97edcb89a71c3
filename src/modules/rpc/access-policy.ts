import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { peerIdFromString } from '@libp2p/peer-id';
import { ACCESS_LEVEL, isAccessLevel } from '../../auth/access-level.js';
import { PlatformError } from '../../common/errors.js';

/** The policy entry that applies to every peer, also unknown ones. */
export const ANY_PEER = '*';

/** What one peer (or `*`) may call, and the access level its calls run with in the application core. */
export interface PeerGrant {
  /** `module.function`, `module.*` or `*`. */
  allow: string[];
  /** -1 admin, 0 anonymous, 1 logged in, 2 trusted: checked against each function's `level`. */
  level: number;
}

export interface AccessPolicyDocument {
  peers: Record<string, PeerGrant>;
}

/** Default level of a peer named in `tb rpc allow` (a known, authenticated peer), and of `*` (anyone). */
export const DEFAULT_PEER_LEVEL = ACCESS_LEVEL.LOGGED_IN;
export const DEFAULT_ANY_PEER_LEVEL = ACCESS_LEVEL.NOT_LOGGED_IN;

export function policyPath(dataDir: string): string {
  return join(dataDir, 'rpc', 'policy.json');
}

const PATTERN = /^(\*|[^\s.*]+\.\*|[^\s.*]+\.[^\s*]+)$/;

export function validatePattern(pattern: string): string {
  if (!PATTERN.test(pattern))
    throw new PlatformError('BAD_REQUEST', `"${pattern}" is not module.function, module.* or *`);
  return pattern;
}

export function validatePeer(peer: string): string {
  if (peer === ANY_PEER) return peer;
  try {
    return peerIdFromString(peer).toString();
  } catch {
    throw new PlatformError('BAD_REQUEST', `"${peer}" is not a peer id (12D3KooW…) or *`);
  }
}

function matches(pattern: string, key: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return key.startsWith(pattern.slice(0, -1));
  return pattern === key;
}

export type AccessDecision = { allowed: true; level: number } | { allowed: false };

/** Decides a call: the peer's own grant first, then the grant to `*`. */
export function decide(document: AccessPolicyDocument, peerId: string, key: string): AccessDecision {
  for (const name of [peerId, ANY_PEER]) {
    const grant = document.peers[name];
    if (grant && grant.allow.some((pattern) => matches(pattern, key))) return { allowed: true, level: grant.level };
  }
  return { allowed: false };
}

function parseDocument(text: string, path: string): AccessPolicyDocument {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PlatformError('BAD_REQUEST', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  const peers = (raw as { peers?: unknown } | null)?.peers;
  if (peers === null || typeof peers !== 'object' || Array.isArray(peers))
    throw new PlatformError('BAD_REQUEST', `${path} must be {"peers": {PEER_ID: {"allow": [...], "level": N}}}`);
  const document: AccessPolicyDocument = { peers: {} };
  for (const [peer, grant] of Object.entries(peers as Record<string, unknown>)) {
    const { allow, level } = (grant ?? {}) as Partial<PeerGrant>;
    if (!Array.isArray(allow) || !allow.every((item) => typeof item === 'string' && PATTERN.test(item)))
      throw new PlatformError(
        'BAD_REQUEST',
        `${path}: peers["${peer}"].allow must list module.function, module.* or *`,
      );
    if (!isAccessLevel(level))
      throw new PlatformError('BAD_REQUEST', `${path}: peers["${peer}"].level must be -1, 0, 1 or 2`);
    document.peers[peer] = { allow: [...allow], level };
  }
  return document;
}

/**
 * The provider's access policy, persisted as `DATA_DIR/rpc/policy.json`. A running provider re-reads the
 * file when it changed (checked at most once a second), so `tb rpc allow|deny` apply without a restart.
 */
export class AccessPolicyStore {
  private cached: AccessPolicyDocument = { peers: {} };
  private cachedMtimeMs = -1;
  private checkedAt = 0;
  private reloading: Promise<AccessPolicyDocument> | undefined;

  constructor(
    readonly path: string,
    private readonly recheckMs = 1000,
  ) {}

  async read(): Promise<AccessPolicyDocument> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { peers: {} };
      throw error;
    }
    return parseDocument(text, this.path);
  }

  /** The current policy for a running provider; a broken file keeps the last good policy. */
  current(): Promise<AccessPolicyDocument> {
    // Calls arriving while the file is being re-read wait for that read, never see an older policy.
    if (this.reloading) return this.reloading;
    if (Date.now() - this.checkedAt < this.recheckMs) return Promise.resolve(this.cached);
    this.reloading = this.reload().finally(() => {
      this.checkedAt = Date.now();
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async reload(): Promise<AccessPolicyDocument> {
    try {
      const mtimeMs = await stat(this.path).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      if (mtimeMs !== this.cachedMtimeMs) {
        this.cached = await this.read();
        this.cachedMtimeMs = mtimeMs;
      }
    } catch {
      // keep the last good policy
    }
    return this.cached;
  }

  async allow(peer: string, pattern: string, level?: number): Promise<AccessPolicyDocument> {
    const name = validatePeer(peer);
    validatePattern(pattern);
    if (level !== undefined && !isAccessLevel(level))
      throw new PlatformError('BAD_REQUEST', `level must be -1, 0, 1 or 2 (got ${level})`);
    const document = await this.read();
    const grant = document.peers[name] ?? {
      allow: [],
      level: name === ANY_PEER ? DEFAULT_ANY_PEER_LEVEL : DEFAULT_PEER_LEVEL,
    };
    if (!grant.allow.includes(pattern)) grant.allow.push(pattern);
    if (level !== undefined) grant.level = level;
    document.peers[name] = grant;
    await this.write(document);
    return document;
  }

  /** Withdraws one pattern from a peer, or the peer's whole grant when no pattern is given. */
  async deny(peer: string, pattern?: string): Promise<{ document: AccessPolicyDocument; changed: boolean }> {
    const name = validatePeer(peer);
    if (pattern !== undefined) validatePattern(pattern);
    const document = await this.read();
    const grant = document.peers[name];
    if (!grant) return { document, changed: false };
    if (pattern === undefined) {
      delete document.peers[name];
    } else {
      if (!grant.allow.includes(pattern)) return { document, changed: false };
      grant.allow = grant.allow.filter((item) => item !== pattern);
      if (grant.allow.length === 0) delete document.peers[name];
    }
    await this.write(document);
    return { document, changed: true };
  }

  private async write(document: AccessPolicyDocument): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.path);
    this.checkedAt = 0;
  }
}
