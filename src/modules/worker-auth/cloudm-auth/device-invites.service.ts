import { createHash, randomInt } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AUTH_STORE, type AuthStore } from '../../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../../../counters/counter-store.js';

/** An invite lives five minutes (the original's lifetime), once. */
export const DEVICE_INVITE_TTL_SECONDS = 300;
/**
 * Wrong codes allowed per client IP and over the whole platform per quarter hour. Six digits are a million
 * codes: with at most 50 guesses a quarter hour, against invites living 5 minutes, guessing one is hopeless;
 * once the platform-wide limit is reached every verify is refused until the window ends (a spray from many
 * addresses stops everyone's invites for a while rather than succeeding).
 */
export const DEVICE_INVITE_FAILURES_PER_IP = 5;
export const DEVICE_INVITE_FAILURES_GLOBAL = 50;
const FAILURE_WINDOW_MS = 15 * 60_000;

interface StoredInvite {
  user_id: string;
  created_at: number;
}

/**
 * Device invites: a signed-in device asks for a 6-digit code, the person types it on a new device, which is
 * signed in as the same user. Codes are single use, live 5 minutes, and are kept in the shared store by their
 * hash (any worker can verify). Wrong codes count per IP and platform-wide (see the limits above).
 */
@Injectable()
export class DeviceInvitesService {
  constructor(
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
  ) {}

  async create(userId: string): Promise<{ code: string; expires_in: number }> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
      // Another user's live invite under the same code is never overwritten: draw again.
      if ((await this.store.get(inviteKey(code))) !== null) continue;
      const invite: StoredInvite = { user_id: userId, created_at: Date.now() };
      await this.store.put(inviteKey(code), JSON.stringify(invite), DEVICE_INVITE_TTL_SECONDS * 1000);
      return { code, expires_in: DEVICE_INVITE_TTL_SECONDS };
    }
    throw new PlatformError('SERVICE_UNAVAILABLE', 'No free invite code; try again in a moment');
  }

  /** The user id of a live invite, which is used up; wrong codes count against the limits. */
  async consume(code: unknown, clientIp: string): Promise<string> {
    if (typeof code !== 'string' || !code) throw new PlatformError('BAD_REQUEST', 'Invite code required');
    await this.assertNotLimited(clientIp);
    const raw = /^\d{6}$/.test(code) ? await this.store.take(inviteKey(code)) : null;
    if (raw === null) {
      await this.counters.increment(ipKey(clientIp), FAILURE_WINDOW_MS);
      await this.counters.increment(GLOBAL_KEY, FAILURE_WINDOW_MS);
      throw new PlatformError('UNAUTHORIZED', 'Invalid or expired invite code');
    }
    return (JSON.parse(raw) as StoredInvite).user_id;
  }

  private async assertNotLimited(clientIp: string): Promise<void> {
    const ipFailures = await this.counters.peek(ipKey(clientIp));
    const allFailures = await this.counters.peek(GLOBAL_KEY);
    if (ipFailures >= DEVICE_INVITE_FAILURES_PER_IP || allFailures >= DEVICE_INVITE_FAILURES_GLOBAL)
      throw new PlatformError('RATE_LIMITED', 'Too many wrong invite codes; try again in a quarter of an hour');
  }
}

const GLOBAL_KEY = 'device-invite-fail:all';

function ipKey(clientIp: string): string {
  return `device-invite-fail:${clientIp}`;
}

function inviteKey(code: string): string {
  return `device-invite:${createHash('sha256').update(code).digest('hex')}`;
}
