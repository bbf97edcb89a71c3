import { Inject, Injectable } from '@nestjs/common';
import { AUTH_STORE, type AuthStore } from './auth-store.js';

/**
 * Revoked access/refresh tokens (by `jti`) and ended cookie sessions (by session id), in the shared
 * AuthStore so every worker process and the registry refuse them. An entry lives exactly as long as the
 * token or session it revokes would have. No cache: each check reads the store, so a revocation holds
 * everywhere at once.
 */
@Injectable()
export class Revocations {
  constructor(@Inject(AUTH_STORE) private readonly store: AuthStore) {}

  /** Revokes `kind:id` until `expiresAtSeconds`; nothing to do for what has already expired. */
  async revoke(kind: RevocationKind, id: string, expiresAtSeconds: number, nowMs = Date.now()): Promise<void> {
    const remainingMs = expiresAtSeconds * 1000 - nowMs;
    if (!id || remainingMs <= 0) return;
    await this.store.put(revocationKey(kind, id), String(Math.floor(nowMs / 1000)), remainingMs);
  }

  async isRevoked(kind: RevocationKind, id: string): Promise<boolean> {
    if (!id) return false;
    return (await this.store.get(revocationKey(kind, id))) !== null;
  }

  /**
   * Ends every session of a user issued before now (a level change, an account change): remembered for
   * `forSeconds`, the longest a session lives.
   */
  async revokeUserSessions(userId: string, forSeconds: number, nowMs = Date.now()): Promise<void> {
    if (!userId || forSeconds <= 0) return;
    // In seconds to the millisecond, as sessions state their `iat`.
    await this.store.put(revocationKey('user', userId), String(nowMs / 1000), forSeconds * 1000);
  }

  /** Whether a session of the user issued at `issuedAtSeconds` was ended by revokeUserSessions. */
  async isUserSessionRevoked(userId: string, issuedAtSeconds: number): Promise<boolean> {
    if (!userId) return false;
    const since = await this.store.get(revocationKey('user', userId));
    return since !== null && issuedAtSeconds < Number(since);
  }
}

export type RevocationKind = 'token' | 'session' | 'user';

function revocationKey(kind: RevocationKind, id: string): string {
  return `revoked:${kind}:${id.slice(0, 150)}`;
}
