import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AUTH_STORE, type AuthStore } from '../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../../counters/counter-store.js';
import { Mailer } from './mailer.js';
import { escapeHtml } from './token-bridge.js';
import { normalizeEmail, UsersService, type LoginOutcome } from './users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

const HOUR_MS = 3600_000;

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

  async request(rawEmail: unknown, clientIp: string, baseUrl: string): Promise<void> {
    if (typeof rawEmail !== 'string') throw new PlatformError('BAD_REQUEST', 'email is required');
    const email = normalizeEmail(rawEmail);
    await this.limit(`magic-ip:${clientIp}`, this.options.magicLinkPerIpPerHour);
    await this.limit(`magic-email:${email.toLowerCase()}`, this.options.magicLinkPerEmailPerHour);
    const token = randomBytes(32).toString('base64url');
    await this.store.put(
      magicKey(token),
      JSON.stringify({ email, created_at: Date.now() }),
      this.options.magicLinkTtlSeconds * 1000,
    );
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
  }

  /** Whether the link is still good, without using it up (GET: mail scanners fetch links). */
  async isLive(token: string): Promise<boolean> {
    if (!token || token.length > 100) return false;
    return (await this.store.get(magicKey(token))) !== null;
  }

  /** Uses the link up and logs its e-mail in. */
  async consume(token: unknown): Promise<LoginOutcome> {
    if (typeof token !== 'string' || !token) throw new PlatformError('BAD_REQUEST', 'Token required');
    const entry = token.length > 100 ? null : await this.store.take(magicKey(token));
    if (entry === null) throw new PlatformError('UNAUTHORIZED', 'This sign-in link has expired or was already used');
    const { email } = JSON.parse(entry) as { email: string };
    return this.users.login({
      provider: 'magic_link',
      providerUserId: email.toLowerCase(),
      email,
      emailVerified: true,
      username: null,
    });
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
