import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AUTH_STORE, type AuthStore } from '../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../../counters/counter-store.js';
import { Mailer } from './mailer.js';
import { escapeHtml } from './token-bridge.js';
import { normalizeEmail, UsersService, type LoginOutcome } from './users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

const HOUR_MS = 3600_000;
/** How long an approved (or refused) poll waits for the device to collect it. */
const POLL_COLLECT_MS = 300_000;
/** Wrong confirm codes before a polled link is used up. */
const POLL_CODE_ATTEMPTS = 3;
const POLLS_PER_MINUTE = 30;
/** Confirm codes: no 0/O, 1/I/L look-alikes. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

interface StoredLink {
  email: string;
  created_at: number;
  /** SHA-256 of the poll id, when a device polls for this link. */
  poll?: string;
  confirm_code?: string;
  attempts?: number;
}

interface StoredPoll {
  status: 'pending' | 'done' | 'refused';
  user_id?: string;
  is_new_user?: boolean;
}

function confirmCode(): string {
  let code = '';
  for (let i = 0; i < 6; i += 1) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

function sameCode(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given.trim().toUpperCase());
  return a.length === b.length && timingSafeEqual(a, b);
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function pollKey(hash: string): string {
  return `magic-poll:${hash}`;
}

/**
 * Magic links: a single-use token, valid MAGIC_LINK_TTL_SECONDS, mailed as
 * `<base>/auth/magic/verify?token=…`. Only its SHA-256 is stored (shared AuthStore), so the store never
 * holds a usable link. Requests are limited per e-mail and per IP; the answer never says whether the
 * e-mail has an account. Consuming a link for an unknown e-mail creates the account (the mail proved it).
 */
@Injectable()
export class MagicLinkService {
  constructor(
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
    private readonly mailer: Mailer,
    private readonly users: UsersService,
  ) {}

  /**
   * Mails a link. With `poll` (a command-line or desktop client signing in through a link opened elsewhere) it
   * also answers an opaque `pollId` to ask `pollStatus` with and a `confirmCode` the client shows: the person
   * opening the link must type that code, so a link nobody asked for (someone requested it with the victim's
   * address and polls) cannot sign the requester in by a mere click.
   */
  async request(
    rawEmail: unknown,
    clientIp: string,
    baseUrl: string,
    options: { poll?: boolean } = {},
  ): Promise<{ pollId: string; confirmCode: string } | null> {
    if (typeof rawEmail !== 'string') throw new PlatformError('BAD_REQUEST', 'email is required');
    const email = normalizeEmail(rawEmail);
    await this.limit(`magic-ip:${clientIp}`, this.options.magicLinkPerIpPerHour);
    await this.limit(`magic-email:${email.toLowerCase()}`, this.options.magicLinkPerEmailPerHour);
    const token = randomBytes(32).toString('base64url');
    const ttlMs = this.options.magicLinkTtlSeconds * 1000;
    let poll: { pollId: string; confirmCode: string } | null = null;
    const stored: StoredLink = { email, created_at: Date.now() };
    if (options.poll) {
      poll = { pollId: randomBytes(32).toString('base64url'), confirmCode: confirmCode() };
      stored.poll = sha256(poll.pollId);
      stored.confirm_code = poll.confirmCode;
      stored.attempts = 0;
      await this.putPoll(stored.poll, { status: 'pending' }, ttlMs + POLL_COLLECT_MS);
    }
    await this.store.put(magicKey(token), JSON.stringify(stored), ttlMs);
    const link = `${baseUrl}/auth/magic/verify?token=${token}`;
    const minutes = Math.round(this.options.magicLinkTtlSeconds / 60);
    await this.mailer.send(
      {
        to: email,
        subject: 'Your Toolbox sign-in link',
        text: `Sign in to Toolbox with this link (valid ${minutes} minutes, once):\n\n${link}\n\nIf you did not ask for it, ignore this mail.\n`,
        html: `<p>Sign in to Toolbox with this link (valid ${minutes} minutes, once):</p><p><a href="${escapeHtml(link)}">Sign in</a></p><p>If you did not ask for it, ignore this mail.</p>`,
      },
      `Magic link for ${email}: ${link}`,
    );
    return poll;
  }

  /** Whether the link is live and whether it signs in a polling device (its confirm page asks for the code). */
  async describe(token: string): Promise<{ live: boolean; polled: boolean }> {
    if (!token || token.length > 100) return { live: false, polled: false };
    const raw = await this.store.get(magicKey(token));
    return { live: raw !== null, polled: raw !== null && Boolean((JSON.parse(raw) as StoredLink).poll) };
  }

  /**
   * The person who opened a polled link typed the polling device's code: the link is used up and the device's
   * next poll gets the login. Three wrong codes use the link up too (the poll then answers "refused").
   */
  async approvePoll(token: unknown, code: unknown): Promise<void> {
    if (typeof token !== 'string' || !token) throw new PlatformError('BAD_REQUEST', 'Token required');
    const raw = token.length > 100 ? null : await this.store.take(magicKey(token));
    if (raw === null) throw new PlatformError('UNAUTHORIZED', 'This sign-in link has expired or was already used');
    const stored = JSON.parse(raw) as StoredLink;
    const remainingMs = stored.created_at + this.options.magicLinkTtlSeconds * 1000 - Date.now();
    if (!stored.poll || !stored.confirm_code) {
      if (remainingMs > 0) await this.store.put(magicKey(token), raw, remainingMs);
      throw new PlatformError('BAD_REQUEST', 'This link signs in this browser; it needs no code');
    }
    if (!sameCode(stored.confirm_code, code)) {
      const attempts = (stored.attempts ?? 0) + 1;
      if (attempts < POLL_CODE_ATTEMPTS && remainingMs > 0) {
        await this.store.put(magicKey(token), JSON.stringify({ ...stored, attempts }), remainingMs);
        throw new PlatformError('BAD_REQUEST', 'The code does not match the one the other device shows');
      }
      await this.putPoll(stored.poll, { status: 'refused' }, POLL_COLLECT_MS);
      throw new PlatformError('UNAUTHORIZED', 'Wrong code too often: this sign-in link is used up');
    }
    const login = await this.loginOf(stored.email);
    await this.putPoll(
      stored.poll,
      { status: 'done', user_id: login.user.id, is_new_user: login.isNewUser },
      POLL_COLLECT_MS,
    );
  }

  /**
   * What the polling device learns: `pending` until the link is approved, then the login once (`done`: the
   * entry is taken); `refused` once the link was used up otherwise. Limited per poll id (a client polls every
   * few seconds).
   */
  async pollStatus(
    pollId: unknown,
  ): Promise<{ status: 'pending' } | { status: 'done'; userId: string; isNewUser: boolean } | { status: 'refused' }> {
    if (typeof pollId !== 'string' || !pollId || pollId.length > 100)
      throw new PlatformError('BAD_REQUEST', 'poll_id required');
    const key = sha256(pollId);
    const hit = await this.counters.increment(`magic-poll:${key}`, 60_000);
    if (hit.count > POLLS_PER_MINUTE)
      throw new PlatformError('RATE_LIMITED', `At most ${POLLS_PER_MINUTE} status checks a minute`);
    const raw = await this.store.get(pollKey(key));
    if (raw === null) throw new PlatformError('NOT_FOUND', 'Unknown or expired sign-in request');
    const poll = JSON.parse(raw) as StoredPoll;
    if (poll.status === 'pending') return { status: 'pending' };
    // Done or refused: answered once.
    const taken = await this.store.take(pollKey(key));
    if (taken === null) throw new PlatformError('NOT_FOUND', 'Unknown or expired sign-in request');
    if (poll.status === 'done' && poll.user_id)
      return { status: 'done', userId: poll.user_id, isNewUser: poll.is_new_user ?? false };
    return { status: 'refused' };
  }

  /** Uses the link up and logs its e-mail in. */
  async consume(token: unknown): Promise<LoginOutcome> {
    if (typeof token !== 'string' || !token) throw new PlatformError('BAD_REQUEST', 'Token required');
    const entry = token.length > 100 ? null : await this.store.take(magicKey(token));
    if (entry === null) throw new PlatformError('UNAUTHORIZED', 'This sign-in link has expired or was already used');
    const stored = JSON.parse(entry) as StoredLink;
    // A polled link used by its token directly (pasted into the client that asked): the poll has nothing to give.
    if (stored.poll) await this.putPoll(stored.poll, { status: 'refused' }, POLL_COLLECT_MS);
    return this.loginOf(stored.email);
  }

  private loginOf(email: string): Promise<LoginOutcome> {
    return this.users.login({
      provider: 'magic_link',
      providerUserId: email.toLowerCase(),
      email,
      emailVerified: true,
      username: null,
    });
  }

  private async putPoll(key: string, poll: StoredPoll, ttlMs: number): Promise<void> {
    await this.store.put(pollKey(key), JSON.stringify(poll), ttlMs);
  }

  private async limit(key: string, perHour: number): Promise<void> {
    const hit = await this.counters.increment(key, HOUR_MS);
    if (hit.count > perHour)
      throw new PlatformError(
        'RATE_LIMITED',
        `Too many sign-in links requested; try again in ${Math.ceil(hit.resetInMs / 60_000)} minutes`,
      );
  }
}

/**
 * The base of links in mail: the workers' configured public URL (WORKER_PUBLIC_BASE_URL). Without one, the
 * request's own Host only when it is loopback (the embedded default), and never forwarded headers, even from a
 * trusted proxy: anyone could ask for a victim's link with `Host: evil.example` or `X-Forwarded-Host` and
 * receive the victim's click.
 */
export function mailLinkBase(publicBaseUrl: string | null, host: string | undefined): string {
  if (publicBaseUrl) return publicBaseUrl;
  let hostname = 'invalid';
  try {
    hostname = new URL(`http://${host ?? 'invalid'}`).hostname;
  } catch {
    hostname = 'invalid';
  }
  if (['localhost', '127.0.0.1', '[::1]'].includes(hostname)) return `http://${host}`;
  throw new PlatformError(
    'SERVICE_UNAVAILABLE',
    'Magic links need WORKER_PUBLIC_BASE_URL on a worker reached by a public name',
  );
}

function magicKey(token: string): string {
  return `magic:${createHash('sha256').update(token).digest('hex')}`;
}
