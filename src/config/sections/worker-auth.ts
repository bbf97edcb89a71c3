import type { EnvironmentReader } from './environment-reader.js';

/** One OAuth 2.0 provider of WorkerAuth; `null` client id = not configured (its routes answer 503). */
export interface OAuthProviderConfig {
  clientId: string | null;
  clientSecret: string | null;
  authorizeUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
}

/** WorkerAuth, the platform's identity provider inside the HTTP workers (docs/auth.md). */
export interface WorkerAuthConfig {
  /** ACCESS_TOKEN_TTL_SECONDS (15 min) and REFRESH_TOKEN_TTL_SECONDS (7 days). */
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** SMTP_URL (smtp://user:pass@host:587 or smtps://…); null = magic links are written to the log. */
  smtpUrl: string | null;
  /** MAIL_FROM: the sender of magic-link mails. */
  mailFrom: string;
  /** MAGIC_LINK_TTL_SECONDS (10 min) and the request limits per e-mail / per IP per hour. */
  magicLinkTtlSeconds: number;
  magicLinkPerEmailPerHour: number;
  magicLinkPerIpPerHour: number;
  /** WORKER_PUBLIC_BASE_URL of the workers (links in mails, OAuth redirect URIs); else the request's own origin. */
  publicBaseUrl: string | null;
  /** OAUTH_REDIRECT_BASE_URL: base of `/auth/{provider}/callback`; default publicBaseUrl or the request origin. */
  oauthRedirectBaseUrl: string | null;
  /**
   * OAUTH_ALLOWED_REDIRECT_ORIGINS: further origins `redirect_after` may name. The platform's own origins
   * (WORKER_PUBLIC_BASE_URL, PUBLIC_BASE_URL, the worker's own origin) and loopback are always allowed.
   */
  oauthAllowedRedirectOrigins: string[];
  /** PUBLIC_BASE_URL of the platform (the registry's public URL): an own origin of the web client. */
  platformBaseUrl: string | null;
  /**
   * REFRESH_REUSE_GRACE_SECONDS (30): how long the refresh token just rotated away still buys the current
   * pair, so two tabs refreshing at once do not end each other's login. 0 turns the grace off.
   */
  refreshReuseGraceSeconds: number;
  /** USER_DATA_MAX_BYTES (64 KiB): the cap of a user's `settings` and of `mod_data`, each as JSON. */
  userDataMaxBytes: number;
  discord: OAuthProviderConfig;
  google: OAuthProviderConfig;
  /** Passkeys (WebAuthn): the relying party the browser binds credentials to. */
  webauthn: WebAuthnConfig;
}

/**
 * WEBAUTHN_RP_ID / WEBAUTHN_ORIGINS / WEBAUTHN_RP_NAME. Without them the host and origin of WORKER_PUBLIC_BASE_URL,
 * else PUBLIC_BASE_URL; with neither (null / []) the worker's own Host of each request.
 */
export interface WebAuthnConfig {
  rpId: string | null;
  rpName: string;
  origins: string[];
}

export function readWorkerAuthSection(read: EnvironmentReader): WorkerAuthConfig {
  const origins = read.list('OAUTH_ALLOWED_REDIRECT_ORIGINS').map((origin) => origin.replace(/\/+$/, ''));
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/i.test(origin))
      read.problems.push(
        `OAUTH_ALLOWED_REDIRECT_ORIGINS entries must be origins like https://app.example.com (got "${origin}")`,
      );
  }
  const smtpUrl = read.string('SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\//i.test(smtpUrl)) read.problems.push('SMTP_URL must start with smtp:// or smtps://');
  return {
    accessTokenTtlSeconds: read.integer('ACCESS_TOKEN_TTL_SECONDS', 900, { min: 30, max: 24 * 3600 }),
    refreshTokenTtlSeconds: read.integer('REFRESH_TOKEN_TTL_SECONDS', 7 * 24 * 3600, { min: 60 }),
    smtpUrl,
    mailFrom: read.string('MAIL_FROM') ?? 'Toolbox Platform <no-reply@localhost>',
    magicLinkTtlSeconds: read.integer('MAGIC_LINK_TTL_SECONDS', 600, { min: 60, max: 24 * 3600 }),
    magicLinkPerEmailPerHour: read.integer('MAGIC_LINK_PER_EMAIL_PER_HOUR', 5, { min: 1 }),
    magicLinkPerIpPerHour: read.integer('MAGIC_LINK_PER_IP_PER_HOUR', 30, { min: 1 }),
    publicBaseUrl: read.baseUrl('WORKER_PUBLIC_BASE_URL'),
    oauthRedirectBaseUrl: read.baseUrl('OAUTH_REDIRECT_BASE_URL'),
    oauthAllowedRedirectOrigins: origins,
    platformBaseUrl: read.baseUrl('PUBLIC_BASE_URL'),
    refreshReuseGraceSeconds: read.integer('REFRESH_REUSE_GRACE_SECONDS', 30, { min: 0, max: 300 }),
    userDataMaxBytes: read.integer('USER_DATA_MAX_BYTES', 64 * 1024, { min: 1024, max: 16 * 1024 * 1024 }),
    discord: oauthProvider(read, 'DISCORD', {
      authorize: 'https://discord.com/api/oauth2/authorize',
      token: 'https://discord.com/api/oauth2/token',
      userinfo: 'https://discord.com/api/users/@me',
    }),
    google: oauthProvider(read, 'GOOGLE', {
      authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
    }),
    webauthn: readWebAuthn(read, read.baseUrl('WORKER_PUBLIC_BASE_URL') ?? read.baseUrl('PUBLIC_BASE_URL')),
  };
}

function readWebAuthn(read: EnvironmentReader, baseUrl: string | null): WebAuthnConfig {
  let base: URL | null = null;
  try {
    base = baseUrl ? new URL(baseUrl) : null;
  } catch {
    base = null;
  }
  const rpId = read.string('WEBAUTHN_RP_ID')?.toLowerCase() ?? base?.hostname ?? null;
  // A relying party id is a bare domain: no scheme, port or path (WebAuthn compares it with the origin's host).
  if (rpId !== null && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(rpId))
    read.problems.push(`WEBAUTHN_RP_ID must be a domain like example.com, without scheme or port (got "${rpId}")`);
  const configured = read.list('WEBAUTHN_ORIGINS').map((origin) => origin.replace(/\/+$/, ''));
  const origins = configured.length > 0 ? configured : base ? [base.origin] : [];
  for (const origin of origins) {
    let host: string | null = null;
    if (/^https?:\/\/[^/\s]+$/i.test(origin)) {
      try {
        host = new URL(origin).hostname;
      } catch {
        host = null;
      }
    }
    if (host === null)
      read.problems.push(`WEBAUTHN_ORIGINS entries must be origins like https://app.example.com (got "${origin}")`);
    // Browsers only use a credential on the RP id's own host or its subdomains.
    else if (rpId !== null && host !== rpId && !host.endsWith(`.${rpId}`))
      read.problems.push(`WEBAUTHN_ORIGINS entry ${origin} is not on WEBAUTHN_RP_ID ${rpId} or a subdomain of it`);
  }
  return { rpId, rpName: read.string('WEBAUTHN_RP_NAME') ?? 'Toolbox', origins };
}

function oauthProvider(
  read: EnvironmentReader,
  prefix: 'DISCORD' | 'GOOGLE',
  defaults: { authorize: string; token: string; userinfo: string },
): OAuthProviderConfig {
  return {
    clientId: read.string(`${prefix}_CLIENT_ID`),
    clientSecret: read.string(`${prefix}_CLIENT_SECRET`),
    authorizeUrl: read.httpUrl(`${prefix}_AUTHORIZE_URL`, defaults.authorize),
    tokenUrl: read.httpUrl(`${prefix}_TOKEN_URL`, defaults.token),
    userinfoUrl: read.httpUrl(`${prefix}_USERINFO_URL`, defaults.userinfo),
  };
}
