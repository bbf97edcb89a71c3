import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { MESSAGE_BROKER, type MessageBroker } from '../../broker/message-broker.js';
import { AUTH_STORE, type AuthStore } from './auth-store.js';

/** Broker topic on which every revocation is announced, so open connections (WebSockets) end with it. */
export const AUTH_REVOKED_TOPIC = 'auth.revoked';

/** What the broker carries on AUTH_REVOKED_TOPIC: the kind and id of what ended. */
export interface RevokedCredential {
  kind: RevocationKind;
  id: string;
}

export function readRevokedCredential(payload: unknown): RevokedCredential | null {
  const value = payload as Partial<RevokedCredential> | null;
  if (!value || typeof value !== 'object' || typeof value.id !== 'string' || !value.id) return null;
  return REVOCATION_KINDS.includes(value.kind as RevocationKind) ? { kind: value.kind!, id: value.id } : null;
}

/**
 * Revoked access/refresh tokens (by `jti`), ended cookie sessions (by session id) and ended logins (by login
 * id: every token and cookie one sign-in produced), in the shared AuthStore so every worker process and the
 * registry refuse them. An entry lives exactly as long as what it revokes would have. No cache: each check
 * reads the store, so a revocation holds everywhere at once. Where the process has a message broker, each
 * revocation is also announced on it, so connections opened with the credential are closed on every worker.
 */
@Injectable()
export class Revocations {
  private readonly logger = new Logger('Revocations');

  constructor(
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Optional() @Inject(MESSAGE_BROKER) private readonly broker?: MessageBroker,
  ) {}

  /** Revokes `kind:id` until `expiresAtSeconds`; nothing to do for what has already expired. */
  async revoke(kind: RevocationKind, id: string, expiresAtSeconds: number, nowMs = Date.now()): Promise<void> {
    const remainingMs = expiresAtSeconds * 1000 - nowMs;
    if (!id || remainingMs <= 0) return;
    await this.store.put(revocationKey(kind, id), String(Math.floor(nowMs / 1000)), remainingMs);
    await this.announce({ kind, id });
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
    await this.announce({ kind: 'user', id: userId });
  }

  /** Whether a session of the user issued at `issuedAtSeconds` was ended by revokeUserSessions. */
  async isUserSessionRevoked(userId: string, issuedAtSeconds: number): Promise<boolean> {
    if (!userId) return false;
    const since = await this.store.get(revocationKey('user', userId));
    return since !== null && issuedAtSeconds < Number(since);
  }

  /** The store holds the revocation already: a broker that is down only delays closing open connections. */
  private async announce(revoked: RevokedCredential): Promise<void> {
    if (!this.broker) return;
    try {
      await this.broker.publish(AUTH_REVOKED_TOPIC, revoked);
    } catch (error) {
      this.logger.warn(`revocation of ${revoked.kind} not announced: ${(error as Error).message}`);
    }
  }
}

const REVOCATION_KINDS = ['token', 'session', 'login', 'user'] as const;
export type RevocationKind = (typeof REVOCATION_KINDS)[number];

function revocationKey(kind: RevocationKind, id: string): string {
  return `revoked:${kind}:${id.slice(0, 150)}`;
}
