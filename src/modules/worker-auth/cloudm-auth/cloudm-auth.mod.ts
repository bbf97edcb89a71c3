import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_LEVEL } from '../../../auth/access-level.js';
import { bearerToken, cookieValue } from '../../../auth/credentials.js';
import { SessionCookies } from '../../../auth/session-cookie/session-cookies.js';
import { PlatformError } from '../../../common/errors.js';
import { Export, Mod, Result, currentCaller } from '../../app-core/index.js';
import type { UserEntity } from '../entities/user.entity.js';
import { MagicLinkService, mailLinkBase } from '../magic-link.service.js';
import { TokensService, type TokenBundle } from '../tokens.service.js';
import { UsersService } from '../users.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from '../worker-auth.options.js';
import { DeviceInvitesService } from './device-invites.service.js';

/** What a function registered with `requestAsKwarg` receives (the fields these functions read). */
interface CallRequest {
  headers: Record<string, string | string[] | undefined>;
  client_ip: string;
}

/** The user record as the web client reads it: never provider tokens, secrets or keys. */
export interface SafeUserRecord {
  user_id: string;
  username: string;
  email: string;
  level: number;
  settings: Record<string, unknown>;
  mod_data: Record<string, unknown>;
  created_at: string;
  last_login: string | null;
  providers: string[];
}

type LoginAnswer = TokenBundle & {
  authenticated: true;
  user_id: string;
  username: string;
  email: string;
  level: number;
  provider: string;
  is_new_user?: boolean;
};

const MODULE = 'CloudM.Auth';

/**
 * A refusal as the web client reads it: an InputError (or InternalError from 500 up) whose exec_code is the
 * HTTP status, so the worker answers that status with the Result body and the client finds the message in
 * `info.help_text`.
 */
function refusal(error: unknown, functionName: string): Result {
  if (!(error instanceof PlatformError)) throw error;
  const options = { dataInfo: `${MODULE}.${functionName}` };
  return error.status >= 500
    ? Result.defaultInternalError(error.message, error.status, options)
    : Result.defaultUserError(error.message, error.status, options);
}

async function answer<T>(functionName: string, body: () => Promise<T>): Promise<Result> {
  try {
    return Result.ok(await body(), { dataInfo: `${MODULE}.${functionName}` });
  } catch (error) {
    return refusal(error, functionName);
  }
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}

/** The signed-in caller of a session function (the worker has checked the level already). */
function callerUserId(): string {
  const userId = currentCaller()?.userId;
  if (!userId) throw new PlatformError('UNAUTHORIZED', 'Sign in first');
  return userId;
}

/** A `user_id` the client sends must name the caller: these functions act on the caller's own record only. */
function ownUserId(sent: unknown): string {
  const userId = callerUserId();
  if (sent !== undefined && sent !== null && sent !== '' && sent !== userId)
    throw new PlatformError('FORBIDDEN', 'Only your own user record can be read or changed here');
  return userId;
}

/**
 * `CloudM.Auth`: the original platform's authentication functions at `/api/CloudM.Auth/{fn}`, with its names,
 * payload fields and Result envelope, on top of WorkerAuth (its users, tokens, cookie sessions and magic links;
 * no second user store or token format). Login, refresh and logout ignore whatever credential the client still
 * sends (`ignoreCredentials`): an expired token or a stale cookie must not turn them into a 401. Every other
 * function acts for the signed-in caller only; a `user_id` the client sends must be the caller's.
 */
@Mod(MODULE)
@Injectable()
export class CloudMAuthMod {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly sessions: SessionCookies,
    private readonly magic: MagicLinkService,
    private readonly invites: DeviceInvitesService,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
  ) {}

  @Export({ name: 'get_auth_config', api: true, ignoreCredentials: true, helper: 'login providers and pages' })
  getAuthConfig(): Promise<Result> {
    return answer('get_auth_config', async () => ({
      providers: {
        discord: { enabled: Boolean(this.options.discord.clientId), client_id: this.options.discord.clientId },
        google: { enabled: Boolean(this.options.google.clientId), client_id: this.options.google.clientId },
        // Passkeys need no provider account; null rp_id: each request's own host (WEBAUTHN_RP_ID unset).
        passkeys: { enabled: true, rp_id: this.options.webauthn.rpId },
      },
      sign_in_url: '/web/assets/login.html',
      after_sign_in_url: '/web/mainContent.html',
    }));
  }

  @Export({
    name: 'validate_session',
    api: true,
    ignoreCredentials: true,
    helper: 'who an access token belongs to',
  })
  validateSession({ token, session_token, Jwt_claim }: ValidateArguments = {}): Promise<Result> {
    return answer('validate_session', () => this.sessionOf(token ?? session_token ?? Jwt_claim));
  }

  @Export({
    name: 'verify_session_token',
    api: true,
    ignoreCredentials: true,
    helper: 'validate_session under its other name',
  })
  verifySessionToken({ token, session_token, Jwt_claim }: ValidateArguments = {}): Promise<Result> {
    return answer('verify_session_token', () => this.sessionOf(token ?? session_token ?? Jwt_claim));
  }

  /** `token` (the access token the web client sends along) is accepted and not used. */
  @Export({
    name: 'refresh_token',
    api: true,
    ignoreCredentials: true,
    helper: 'a new token pair for a refresh token (rotating)',
  })
  refreshToken({
    refresh_token,
    token: _accessToken,
  }: { refresh_token?: unknown; token?: unknown } = {}): Promise<Result> {
    return answer('refresh_token', async () => {
      const token = text(refresh_token);
      if (!token) throw new PlatformError('BAD_REQUEST', 'Refresh token required');
      return (await this.tokens.refresh(token)).bundle;
    });
  }

  /**
   * Ends the whole login of the token given (body `token`/`refresh_token`, else the Bearer header, expired or
   * not) and of the `tb_session` cookie, on every worker, and clears the cookie. Logging out twice is no error.
   */
  @Export({
    name: 'logout',
    api: true,
    ignoreCredentials: true,
    requestAsKwarg: true,
    helper: 'end the login everywhere and clear the cookie',
  })
  async logout({
    token,
    refresh_token,
    request,
  }: { token?: unknown; refresh_token?: unknown; request?: CallRequest } = {}): Promise<Result> {
    const result = await answer('logout', async () => {
      let header: string | null = null;
      try {
        header = bearerToken(single(request?.headers.authorization));
      } catch {
        header = null;
      }
      for (const given of [text(token), text(refresh_token), header]) if (given) await this.tokens.revoke(given);
      const cookie = request ? cookieValue(request, this.sessions.cookieName) : null;
      if (cookie) {
        const session = await this.sessions.verify(cookie).catch(() => null);
        if (session) {
          await this.sessions.revoke({ sessionId: session.session_id, expiresAt: session.exp });
          if (session.login_id) await this.tokens.endLogin(session.login_id);
        }
      }
      return { logged_out: true };
    });
    return result.withHttpHeader('Set-Cookie', this.sessions.clearCookie());
  }

  @Export({
    name: 'get_user_data',
    api: true,
    level: ACCESS_LEVEL.LOGGED_IN,
    helper: "the caller's own user record",
  })
  getUserData({ user_id }: { user_id?: unknown } = {}): Promise<Result> {
    return answer('get_user_data', async () => {
      const user = await this.users.findById(ownUserId(user_id));
      if (!user) throw new PlatformError('NOT_FOUND', 'User not found');
      return this.record(user);
    });
  }

  /** `level` and `email` are named so that sending them is refused with a reason, not an unknown-field error. */
  @Export({
    name: 'update_user_data',
    api: true,
    level: ACCESS_LEVEL.LOGGED_IN,
    helper: "change the caller's settings, mod_data or username",
  })
  updateUserData({
    user_id,
    settings,
    mod_data,
    username,
    level,
    email,
  }: {
    user_id?: unknown;
    settings?: unknown;
    mod_data?: unknown;
    username?: unknown;
    level?: unknown;
    email?: unknown;
  } = {}): Promise<Result> {
    return answer('update_user_data', async () => {
      const userId = ownUserId(user_id);
      if (level !== undefined)
        throw new PlatformError('FORBIDDEN', 'level cannot be changed here; levels change through admin tooling');
      if (email !== undefined) throw new PlatformError('FORBIDDEN', 'email cannot be changed here');
      const user = await this.users.updateOwnData(
        userId,
        { settings, modData: mod_data, username },
        this.options.userDataMaxBytes,
      );
      return this.record(user);
    });
  }

  @Export({ name: 'list_users', api: true, level: ACCESS_LEVEL.ADMIN, helper: 'every user (admins only)' })
  listUsers({ limit, offset }: { limit?: unknown; offset?: unknown } = {}): Promise<Result> {
    return answer('list_users', async () => {
      const take = Math.min(Math.max(Number(limit ?? 100) || 100, 1), 1000);
      const skip = Math.max(Number(offset ?? 0) || 0, 0);
      return (await this.users.list({ limit: take, offset: skip })).map((user) => ({
        user_id: user.id,
        username: user.username,
        email: user.email,
        level: user.level,
        created_at: user.createdAt.toISOString(),
      }));
    });
  }

  /**
   * Mails a sign-in link; the same answer whether or not the e-mail has an account, and never the link. With
   * `poll: true` (a command-line or desktop client) it also answers `poll_id` for check_magic_link_status and
   * `confirm_code`, which the client shows and the person types on the link's page.
   */
  @Export({
    name: 'request_magic_link',
    api: true,
    ignoreCredentials: true,
    requestAsKwarg: true,
    helper: 'mail a single-use sign-in link',
  })
  requestMagicLink({
    email,
    poll,
    request,
  }: { email?: unknown; poll?: unknown; request?: CallRequest } = {}): Promise<Result> {
    return answer('request_magic_link', async () => {
      const base = mailLinkBase(this.options.publicBaseUrl, single(request?.headers.host));
      const polling = await this.magic.request(email, request?.client_ip ?? 'unknown', base, {
        poll: poll === true || poll === 'true',
      });
      if (!polling) return { message: 'Magic link sent' };
      return {
        message: 'Magic link sent',
        poll_id: polling.pollId,
        confirm_code: polling.confirmCode,
        expires_in: this.options.magicLinkTtlSeconds,
      };
    });
  }

  /** `pending` until the person approved the link with the code, then the login and bundle, once. */
  @Export({
    name: 'check_magic_link_status',
    api: true,
    ignoreCredentials: true,
    helper: 'poll a magic link requested with poll: true',
  })
  checkMagicLinkStatus({ poll_id }: { poll_id?: unknown } = {}): Promise<Result> {
    return answer('check_magic_link_status', async () => {
      const status = await this.magic.pollStatus(poll_id);
      if (status.status === 'pending') return { status: 'pending' };
      if (status.status === 'refused')
        throw new PlatformError('UNAUTHORIZED', 'The link was used up without signing this device in');
      const user = await this.users.findById(status.userId);
      if (!user) throw new PlatformError('UNAUTHORIZED', 'User not found');
      return { status: 'done', ...(await this.login(user, 'magic_link', status.isNewUser)) };
    });
  }

  @Export({
    name: 'verify_magic_link',
    api: true,
    ignoreCredentials: true,
    helper: 'sign in with the token of a magic link',
  })
  verifyMagicLink({ token }: { token?: unknown } = {}): Promise<Result> {
    return answer('verify_magic_link', async () => {
      const login = await this.magic.consume(token);
      return this.login(login.user, 'magic_link', login.isNewUser);
    });
  }

  /** A 6-digit code for the caller's account, to type on a new device (5 minutes, once). */
  @Export({
    name: 'create_device_invite',
    api: true,
    level: ACCESS_LEVEL.LOGGED_IN,
    helper: 'a short code that signs a new device in as the caller',
  })
  createDeviceInvite({ user_id }: { user_id?: unknown } = {}): Promise<Result> {
    return answer('create_device_invite', () => this.invites.create(ownUserId(user_id)));
  }

  @Export({
    name: 'verify_device_invite',
    api: true,
    ignoreCredentials: true,
    requestAsKwarg: true,
    helper: 'sign in with a device invite code',
  })
  verifyDeviceInvite({ code, request }: { code?: unknown; request?: CallRequest } = {}): Promise<Result> {
    return answer('verify_device_invite', async () => {
      const userId = await this.invites.consume(code, request?.client_ip ?? 'unknown');
      const user = await this.users.findById(userId);
      if (!user) throw new PlatformError('UNAUTHORIZED', 'Invalid or expired invite code');
      return this.login(user, 'device_invite');
    });
  }

  private async sessionOf(token: unknown): Promise<object> {
    const given = text(token);
    if (!given) throw new PlatformError('UNAUTHORIZED', 'No token provided');
    const principal = await this.tokens.verifyAccess(given);
    const user = await this.users.findById(principal.platformUserId);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'User not found');
    return {
      authenticated: true,
      user_id: user.id,
      user_name: user.username,
      email: user.email,
      level: user.level,
      provider: principal.provider ?? null,
      settings: user.settings ?? {},
    };
  }

  private async login(user: UserEntity, provider: string, isNewUser?: boolean): Promise<LoginAnswer> {
    const { login_id: _loginId, ...bundle } = await this.tokens.issue(user, provider);
    return {
      authenticated: true,
      user_id: user.id,
      username: user.username,
      email: user.email,
      level: user.level,
      provider,
      ...(isNewUser === undefined ? {} : { is_new_user: isNewUser }),
      ...bundle,
    };
  }

  private async record(user: UserEntity): Promise<SafeUserRecord> {
    const identities = await this.users.identitiesOf(user.id);
    return {
      user_id: user.id,
      username: user.username,
      email: user.email,
      level: user.level,
      settings: user.settings ?? {},
      mod_data: user.modData ?? {},
      created_at: user.createdAt.toISOString(),
      last_login: user.lastLoginAt?.toISOString() ?? null,
      providers: identities.map((identity) => identity.provider),
    };
  }
}

interface ValidateArguments {
  token?: unknown;
  session_token?: unknown;
  Jwt_claim?: unknown;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
