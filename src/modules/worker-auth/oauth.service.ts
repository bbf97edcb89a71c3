import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AUTH_STORE, type AuthStore } from '../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../common/errors.js';
import type { OAuthProviderConfig } from '../../config/config.js';
import { UsersService, type LoginOutcome, type ProviderProfile } from './users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

export const OAUTH_PROVIDERS = ['discord', 'google'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

const STATE_TTL_MS = 600_000; // OAUTH_STATE_TTL_SECONDS
const SCOPES: Record<OAuthProviderName, string> = { discord: 'identify email', google: 'openid email profile' };
const EXCHANGE_TIMEOUT_MS = 10_000;

interface StoredState {
  provider: OAuthProviderName;
  redirect_uri: string;
  redirect_after: string | null;
  code_verifier: string | null;
  /** SHA-256 of the state cookie's value: the callback must come from the browser that started the flow. */
  browser: string;
}

/** The cookie that binds an OAuth flow to the browser that started it (login CSRF defence). */
export const OAUTH_STATE_COOKIE = 'tb_oauth_state';
export const OAUTH_STATE_TTL_SECONDS = 600;

export interface OAuthLogin extends LoginOutcome {
  provider: OAuthProviderName;
  redirectAfter: string | null;
}

/**
 * OAuth 2.0 authorization-code logins with Discord and Google. The `state` is required, single use and
 * lives 10 minutes in the shared AuthStore (any worker may receive the callback); it is bound to the browser
 * that asked for it by a random value in the `tb_oauth_state` cookie (only its hash is stored), so a callback
 * URL an attacker obtained for their own account, opened in a victim's browser, does not sign the victim in
 * as the attacker (login CSRF). Google also gets PKCE (S256). `redirect_after` must be one of the platform's own origins or loopback (allowedRedirect). Endpoints and client
 * credentials come from the configuration, so tests point them at a local fake provider.
 */
@Injectable()
export class OAuthService {
  constructor(
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
    private readonly users: UsersService,
  ) {}

  async authorizationUrl(
    provider: OAuthProviderName,
    redirectAfter: unknown,
    baseUrl: string,
  ): Promise<{ auth_url: string; state: string; browserBinding: string }> {
    const config = this.configured(provider);
    const after = this.allowedRedirect(redirectAfter, baseUrl);
    const state = randomBytes(32).toString('base64url');
    const browserBinding = randomBytes(32).toString('base64url');
    const redirectUri = `${this.options.oauthRedirectBaseUrl ?? baseUrl}/auth/${provider}/callback`;
    const verifier = provider === 'google' ? randomBytes(48).toString('base64url') : null;
    const stored: StoredState = {
      provider,
      redirect_uri: redirectUri,
      redirect_after: after,
      code_verifier: verifier,
      browser: sha256(browserBinding),
    };
    await this.store.put(stateKey(state), JSON.stringify(stored), STATE_TTL_MS);
    const url = new URL(config.authorizeUrl);
    url.searchParams.set('client_id', config.clientId!);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', SCOPES[provider]);
    url.searchParams.set('state', state);
    if (verifier) {
      url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('access_type', 'offline');
      url.searchParams.set('prompt', 'consent');
    }
    return { auth_url: url.toString(), state, browserBinding };
  }

  /** The state's `redirect_after`, for an error page, without using the state up. */
  async redirectAfterOf(state: unknown): Promise<string | null> {
    if (typeof state !== 'string' || !state || state.length > 100) return null;
    const raw = await this.store.get(stateKey(state));
    return raw ? (JSON.parse(raw) as StoredState).redirect_after : null;
  }

  async discardState(state: unknown): Promise<void> {
    if (typeof state === 'string' && state && state.length <= 100) await this.store.delete(stateKey(state));
  }

  async callback(
    provider: OAuthProviderName,
    code: unknown,
    state: unknown,
    browserBinding: string | null,
  ): Promise<OAuthLogin> {
    const config = this.configured(provider);
    if (typeof code !== 'string' || !code) throw new PlatformError('BAD_REQUEST', 'Authorization code required');
    if (typeof state !== 'string' || !state) throw new PlatformError('BAD_REQUEST', 'OAuth state required');
    const pending = state.length > 100 ? null : await this.store.get(stateKey(state));
    if (pending && !sameBrowser(JSON.parse(pending) as StoredState, browserBinding))
      throw new PlatformError(
        'BAD_REQUEST',
        'This sign-in was started in another browser (no matching state cookie). Please start it again here.',
      );
    const raw = pending === null ? null : await this.store.take(stateKey(state));
    const stored = raw ? (JSON.parse(raw) as StoredState) : null;
    if (!stored || stored.provider !== provider)
      throw new PlatformError('BAD_REQUEST', 'Invalid or expired OAuth state. Please try again.');
    const accessToken = await this.exchange(config, code, stored);
    const profile = await this.profile(provider, config, accessToken);
    const outcome = await this.users.login(profile);
    return { ...outcome, provider, redirectAfter: stored.redirect_after };
  }

  private configured(provider: OAuthProviderName): OAuthProviderConfig {
    const config = this.options[provider];
    if (!config.clientId || !config.clientSecret) {
      const prefix = provider.toUpperCase();
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `${provider} login is not configured: set ${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET`,
      );
    }
    return config;
  }

  /**
   * The origin to return to: one of the platform's own (OAUTH_ALLOWED_REDIRECT_ORIGINS, WORKER_PUBLIC_BASE_URL,
   * PUBLIC_BASE_URL, the origin this request reached) or a loopback one (the desktop and CLI clients listen on
   * 127.0.0.1 and send their full callback URL). Any other origin would receive the tokens: refused.
   */
  private allowedRedirect(value: unknown, baseUrl: string): string | null {
    if (value === undefined || value === null || value === '') return null;
    let url: URL;
    try {
      url = new URL(String(value));
    } catch {
      throw new PlatformError('BAD_REQUEST', 'redirect_after must be an absolute URL of an allowed origin');
    }
    const origin = url.origin;
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new PlatformError('BAD_REQUEST', `redirect_after origin ${origin} is not allowed`);
    const own = [
      ...this.options.oauthAllowedRedirectOrigins,
      ...[this.options.publicBaseUrl, this.options.platformBaseUrl, baseUrl].flatMap((base) => originOf(base)),
    ];
    if (!own.includes(origin) && !LOOPBACK_HOSTS.has(url.hostname))
      throw new PlatformError('BAD_REQUEST', `redirect_after origin ${origin} is not allowed`);
    return origin;
  }

  /** The token request: form-encoded, client_secret_post (both providers accept it), PKCE verifier for Google. */
  private async exchange(config: OAuthProviderConfig, code: string, stored: StoredState): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: stored.redirect_uri,
      client_id: config.clientId!,
      client_secret: config.clientSecret!,
      ...(stored.code_verifier ? { code_verifier: stored.code_verifier } : {}),
    });
    const response = await this.call(config.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
    if (!response.ok || typeof body.access_token !== 'string')
      throw new PlatformError(
        'UNAUTHORIZED',
        `The provider refused the authorization code${typeof body.error === 'string' ? ` (${body.error})` : ''}`,
      );
    return body.access_token;
  }

  private async profile(
    provider: OAuthProviderName,
    config: OAuthProviderConfig,
    accessToken: string,
  ): Promise<ProviderProfile> {
    const response = await this.call(config.userinfoUrl, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    });
    if (!response.ok) throw new PlatformError('UNAUTHORIZED', `The provider did not return the profile`);
    const info = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    const str = (value: unknown) => (typeof value === 'string' && value ? value : null);
    if (provider === 'discord') {
      const id = str(info.id);
      if (!id) throw new PlatformError('UNAUTHORIZED', 'The provider returned no account id');
      return {
        provider,
        providerUserId: id,
        email: str(info.email),
        emailVerified: info.verified === true,
        username: str(info.global_name) ?? str(info.username),
      };
    }
    // Google: OpenID Connect userinfo (sub, email_verified) or the v2 userinfo (id, verified_email).
    const id = str(info.sub) ?? str(info.id);
    if (!id) throw new PlatformError('UNAUTHORIZED', 'The provider returned no account id');
    const email = str(info.email);
    return {
      provider,
      providerUserId: id,
      email,
      emailVerified: info.email_verified === true || info.verified_email === true,
      username: str(info.name) ?? email?.split('@')[0] ?? null,
    };
  }

  private async call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS), redirect: 'error' });
    } catch (error) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `The login provider cannot be reached: ${(error as Error).message}`,
      );
    }
  }
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

function originOf(base: string | null): string[] {
  if (!base) return [];
  try {
    return [new URL(base).origin];
  } catch {
    return [];
  }
}

function stateKey(state: string): string {
  return `oauth-state:${createHash('sha256').update(state).digest('hex')}`;
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time: the stored hash against the hash of the cookie's value. */
function sameBrowser(stored: StoredState, browserBinding: string | null): boolean {
  if (!browserBinding || typeof stored.browser !== 'string') return false;
  const given = Buffer.from(sha256(browserBinding), 'hex');
  const expected = Buffer.from(stored.browser, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
