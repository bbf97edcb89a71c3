import {
  createParamDecorator,
  Controller,
  type ExecutionContext,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiCookieAuth,
  ApiBearerAuth,
  ApiFoundResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public, SESSION_COOKIE_SECURITY } from '../../auth/access.decorators.js';
import { bearerToken, cookieValue } from '../../auth/credentials.js';
import { loginIdOf } from '../../auth/shared-store/live-credentials.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { SessionCookies } from '../../auth/session-cookie/session-cookies.js';
import { PlatformError } from '../../common/errors.js';
import { ErrorResponseDto } from '../../common/openapi.js';
import { publicBaseUrl } from '../../common/request-base-url.js';
import type { UserEntity } from './entities/user.entity.js';
import { MagicLinkService, mailLinkBase } from './magic-link.service.js';
import {
  OAUTH_PROVIDERS,
  OAUTH_STATE_COOKIE,
  OAUTH_STATE_TTL_SECONDS,
  OAuthService,
  type OAuthProviderName,
} from './oauth.service.js';
import { magicLinkApprovedPage, magicLinkConfirmPage, tokenBridgeErrorPage, tokenBridgePage } from './token-bridge.js';
import { TokensService, type TokenBundle } from './tokens.service.js';
import { UsersService } from './users.service.js';
import {
  IsValidSessionEnvelopeDto,
  LoggedOutDto,
  MagicLinkRequestDto,
  MagicLinkRequestedDto,
  OAuthUrlDto,
  RefreshRequestDto,
  TokenBundleDto,
  UserDataEnvelopeDto,
  ValidSessionEnvelopeDto,
  ValidateSessionRequestDto,
} from './worker-auth.responses.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

type Body = Record<string, unknown> | undefined;

/**
 * The JSON body as sent, without the DTO whitelist: the original web client adds fields of its own
 * (user id hints and more) that must not turn a login into a 422. Each route reads only its fields.
 */
const JsonBody = createParamDecorator((_data: unknown, context: ExecutionContext): Body => {
  const body: unknown = context.switchToHttp().getRequest<Request>().body;
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined;
});

/** The Result envelope of a successful answer (the original worker's shape). */
function envelope(data: unknown, dataInfo: string, helpText: string, dataType: string | null = null): object {
  return {
    error: 'none',
    origin: null,
    result: { data_to: 'API', data_info: dataInfo, data, data_type: dataType },
    info: { exec_code: 0, help_text: helpText },
  };
}

function stringField(body: Body, ...names: string[]): string | null {
  for (const name of names) {
    const value = body?.[name];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}

const unauthorized = ApiUnauthorizedResponse({ description: 'No valid session or token', type: ErrorResponseDto });
const badRequest = ApiBadRequestResponse({ description: 'Missing or malformed input', type: ErrorResponseDto });
const html = { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } };

/**
 * WorkerAuth's routes, at the original's paths so its web client keeps working: session
 * validation into the `tb_session` cookie, user data, logout, token refresh, OAuth (Discord, Google) and
 * magic links. Login routes ignore whatever credential the browser still sends (a stale cookie must not
 * stop a new login).
 */
@ApiTags('auth')
@Controller()
export class WorkerAuthController {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly sessions: SessionCookies,
    private readonly magic: MagicLinkService,
    private readonly oauth: OAuthService,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
  ) {}

  @Post('validateSession')
  @HttpCode(200)
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'Turn an access token into a tb_session cookie',
    description:
      'The token comes from the JSON body (`session_token`, `token` or `Jwt_claim`) or a Bearer header. Answers a signed `tb_session` cookie (HttpOnly, SameSite=Lax, Secure unless NODE_ENV=development).',
  })
  @ApiBody({ type: ValidateSessionRequestDto, required: false })
  @ApiOkResponse({ type: ValidSessionEnvelopeDto, description: 'Valid Session; Set-Cookie tb_session' })
  @unauthorized
  async validateSession(
    @JsonBody() body: Body,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<object> {
    const token =
      stringField(body, 'session_token', 'token', 'Jwt_claim') ?? bearerToken(request.headers.authorization);
    if (!token) throw new PlatformError('UNAUTHORIZED', 'No authentication token provided');
    const principal = await this.tokens.verifyAccess(token);
    const user = await this.users.findById(principal.platformUserId);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'Invalid or expired session: the user does not exist');
    // The cookie belongs to the token's login: however often a token is exchanged, its cookies end with it.
    const session = this.sessions.issue({
      userId: user.id,
      username: user.username,
      level: user.level,
      email: user.email,
      loginId: loginIdOf(principal),
    });
    response.setHeader('Set-Cookie', session.setCookie);
    return envelope(
      {
        authenticated: true,
        session_id: session.sessionId,
        user_id: user.id,
        user_name: user.username,
        level: user.level,
      },
      'Valid Session',
      'Valid Session',
    );
  }

  @Get('IsValidSession')
  @Authenticated()
  @ApiCookieAuth(SESSION_COOKIE_SECURITY)
  @ApiOperation({ summary: 'Whether the tb_session cookie (or Bearer token) is a live session' })
  @ApiOkResponse({ type: IsValidSessionEnvelopeDto })
  isValidSession(): object {
    return envelope(null, 'Valid Session', 'Valid Session');
  }

  @Get('api_user_data')
  @Authenticated()
  @ApiCookieAuth(SESSION_COOKIE_SECURITY)
  @ApiOperation({
    summary: "The caller's user record",
    description:
      'Id, username, e-mail, level, linked providers, dates, `settings` and `mod_data`; never provider tokens or secrets.',
  })
  @ApiOkResponse({ type: UserDataEnvelopeDto })
  @ApiNotFoundResponse({ description: 'The session names no existing user', type: ErrorResponseDto })
  async userData(@Req() request: AuthenticatedRequest): Promise<object> {
    const userId = request.principal!.platformUserId;
    const user = await this.users.findById(userId);
    if (!user) throw new PlatformError('NOT_FOUND', 'User data not found.');
    const identities = await this.users.identitiesOf(user.id);
    return envelope(
      {
        user_id: user.id,
        username: user.username,
        email: user.email,
        level: user.level,
        providers: identities.map((identity) => ({
          provider: identity.provider,
          provider_user_id: identity.providerUserId,
          linked_at: identity.createdAt.toISOString(),
        })),
        created_at: user.createdAt.toISOString(),
        last_login_at: user.lastLoginAt?.toISOString() ?? null,
        settings: user.settings ?? {},
        mod_data: user.modData ?? {},
      },
      'User data retrieved',
      'Success',
      'json',
    );
  }

  @Post('web/logoutS')
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'Log out: end the whole login (tokens, refresh family, cookies), clear the cookie',
    description:
      'Ends the login of the access or refresh token given in the body (`token`, `session_token`, `refresh_token`) or Bearer header, and of the tb_session cookie, on every worker: its access tokens, its refresh-token family, every cookie issued for it, and the WebSocket connections opened with them (closed with 4001). 302 to /web/logout; JSON when the client accepts application/json. Logging out twice is not an error.',
  })
  @ApiFoundResponse({ description: 'Location: /web/logout' })
  @ApiOkResponse({ type: LoggedOutDto, description: 'With Accept: application/json' })
  @ApiBearerAuth()
  @ApiCookieAuth(SESSION_COOKIE_SECURITY)
  async logout(@JsonBody() body: Body, @Req() request: Request, @Res() response: Response): Promise<void> {
    let header: string | null = null;
    try {
      header = bearerToken(request.headers.authorization);
    } catch {
      header = null;
    }
    for (const token of [
      header,
      stringField(body, 'token', 'session_token', 'Jwt_claim'),
      stringField(body, 'refresh_token'),
    ]) {
      if (token) await this.tokens.revoke(token);
    }
    const cookie = cookieValue(request, this.sessions.cookieName);
    if (cookie) {
      const session = await this.sessions.verify(cookie).catch(() => null);
      if (session) {
        await this.sessions.revoke({ sessionId: session.session_id, expiresAt: session.exp });
        if (session.login_id) await this.tokens.endLogin(session.login_id);
      }
    }
    response.setHeader('Set-Cookie', this.sessions.clearCookie());
    response.setHeader('Cache-Control', 'no-store');
    if (/application\/json/i.test(request.get('accept') ?? '')) {
      response.status(200).json({ status: 'logged_out' });
      return;
    }
    response.redirect(302, '/web/logout');
  }

  @Post('auth/refresh')
  @HttpCode(200)
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'Trade a refresh token for a new bundle',
    description:
      'Rotation: the refresh token given is used up. Within REFRESH_REUSE_GRACE_SECONDS (30 s) it still answers the current pair (two tabs refreshing at once); later, using it again is a 401 that ends the login.',
  })
  @ApiBody({ type: RefreshRequestDto })
  @ApiOkResponse({ type: TokenBundleDto })
  @unauthorized
  async refresh(@JsonBody() body: Body): Promise<TokenBundle> {
    const token = stringField(body, 'refresh_token', 'token');
    if (!token) throw new PlatformError('BAD_REQUEST', 'refresh_token is required');
    return (await this.tokens.refresh(token)).bundle;
  }

  @Get('auth/:provider/url')
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'Start an OAuth login: the provider URL and its single-use state (10 min)',
    description:
      'Sets the `tb_oauth_state` cookie (HttpOnly, SameSite=Lax, Path=/auth/, 10 min) that binds the state to this browser: the callback is refused in a browser without it.',
  })
  @ApiParam({ name: 'provider', enum: OAUTH_PROVIDERS })
  @ApiQuery({
    name: 'redirect_after',
    required: false,
    description: 'Origin of the web client to return to (one of OAUTH_ALLOWED_REDIRECT_ORIGINS)',
  })
  @ApiOkResponse({ type: OAuthUrlDto })
  @badRequest
  @ApiNotFoundResponse({ description: 'Unknown provider', type: ErrorResponseDto })
  @ApiServiceUnavailableResponse({ description: 'Provider not configured', type: ErrorResponseDto })
  async oauthUrl(
    @Param('provider') provider: string,
    @Query('redirect_after') redirectAfter: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ auth_url: string; state: string }> {
    const started = await this.oauth.authorizationUrl(oauthProvider(provider), redirectAfter, this.baseUrl(request));
    response.setHeader('Set-Cookie', this.oauthStateCookie(started.browserBinding, OAUTH_STATE_TTL_SECONDS));
    return { auth_url: started.auth_url, state: started.state };
  }

  @Get('auth/:provider/callback')
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'OAuth callback: exchange the code, log in, answer the token-bridge page',
    description: 'Links by provider account, else by e-mail only when the provider verified it, else creates the user.',
  })
  @ApiParam({ name: 'provider', enum: OAUTH_PROVIDERS })
  @ApiQuery({ name: 'code', required: true })
  @ApiQuery({ name: 'state', required: true })
  @ApiQuery({ name: 'error', required: false, description: 'Set by the provider when the person declined' })
  @ApiProduces('text/html')
  @ApiOkResponse({ ...html, description: 'Token bridge (Set-Cookie tb_session)' })
  @ApiBadRequestResponse({
    ...html,
    description: 'Missing code, missing/expired state, or a browser without the state cookie: error page',
  })
  @ApiServiceUnavailableResponse({ description: 'Provider not configured', type: ErrorResponseDto })
  async oauthCallback(
    @Param('provider') provider: string,
    @Query('code') code: unknown,
    @Query('state') state: unknown,
    @Query('error') providerError: unknown,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const name = oauthProvider(provider);
    const redirectAfter = await this.oauth.redirectAfterOf(state);
    const browserBinding = cookieValue(request, OAUTH_STATE_COOKIE);
    // The flow ends here whatever its outcome: the binding cookie goes.
    response.setHeader('Set-Cookie', this.oauthStateCookie('', 0));
    try {
      // The person declined at the provider (RFC 6749 4.1.2.1): the state is used up all the same.
      if (typeof providerError === 'string' && providerError) {
        await this.oauth.discardState(state);
        throw new PlatformError('UNAUTHORIZED', `${name} login was not completed (${providerError.slice(0, 64)})`);
      }
      const login = await this.oauth.callback(name, code, state, browserBinding);
      await this.answerBridge(response, login.user, login.provider, login.redirectAfter);
    } catch (error) {
      if (!(error instanceof PlatformError) || error.code === 'SERVICE_UNAVAILABLE') throw error;
      this.answerHtml(response, error.status, tokenBridgeErrorPage(error.message, redirectAfter));
    }
  }

  @Post('auth/magic/request')
  @HttpCode(202)
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'Mail a single-use sign-in link (10 min)',
    description:
      'The same 202 whether or not the e-mail has an account (an unknown e-mail gets an account when the link is used). Limited per e-mail and per IP. Without SMTP_URL the link is written to the log.',
  })
  @ApiBody({ type: MagicLinkRequestDto })
  @ApiAcceptedResponse({ type: MagicLinkRequestedDto })
  @badRequest
  @ApiTooManyRequestsResponse({ description: 'Too many links for this e-mail or IP', type: ErrorResponseDto })
  async requestMagicLink(@JsonBody() body: Body, @Req() request: Request): Promise<MagicLinkRequestedDto> {
    await this.magic.request(body?.email, request.ip ?? 'unknown', this.mailLinkBase(request));
    return { status: 'accepted', message: 'If the address can receive mail, a sign-in link is on its way.' };
  }

  @Get('auth/magic/verify')
  @Public({ ignoreToken: true })
  @ApiOperation({
    summary: 'The confirm page of a magic link',
    description: 'Does not use the link up (mail scanners fetch links): its button POSTs to /auth/magic/verify.',
  })
  @ApiQuery({ name: 'token', required: true })
  @ApiProduces('text/html')
  @ApiOkResponse(html)
  @ApiBadRequestResponse({ description: 'Token required', type: ErrorResponseDto })
  async magicConfirm(@Query('token') token: unknown, @Res() response: Response): Promise<void> {
    if (typeof token !== 'string' || !token) throw new PlatformError('BAD_REQUEST', 'Token required');
    const link = await this.magic.describe(token);
    this.answerHtml(response, link.live ? 200 : 410, magicLinkConfirmPage(token, link.live, link.polled));
  }

  @Post('auth/magic/verify')
  @Public({ ignoreToken: true })
  @ApiOperation({ summary: 'Use a magic link: log in and answer the token-bridge page' })
  @ApiBody({
    description: 'The form the confirm page posts (application/x-www-form-urlencoded) or JSON',
    schema: {
      type: 'object',
      properties: {
        token: { type: 'string' },
        confirm_code: {
          type: 'string',
          description: 'For a link a command-line or desktop client polls for: the code that client shows',
        },
      },
      required: ['token'],
    },
  })
  @ApiProduces('text/html')
  @ApiOkResponse({ ...html, description: 'Token bridge (Set-Cookie tb_session)' })
  @ApiUnauthorizedResponse({ ...html, description: 'Expired or used link: error page' })
  async magicVerify(@JsonBody() body: Body, @Req() request: Request, @Res() response: Response): Promise<void> {
    const form = await formFields(request);
    const token = stringField(body, 'token') ?? form?.get('token') ?? null;
    const confirmCode = stringField(body, 'confirm_code') ?? form?.get('confirm_code') ?? null;
    try {
      // A link a command-line or desktop client polls for signs that device in, not this browser.
      if (confirmCode !== null || (typeof token === 'string' && (await this.magic.describe(token)).polled)) {
        await this.magic.approvePoll(token, confirmCode);
        this.answerHtml(response, 200, magicLinkApprovedPage());
        return;
      }
      const login = await this.magic.consume(token);
      await this.answerBridge(response, login.user, 'magic_link', null);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      this.answerHtml(response, error.status, tokenBridgeErrorPage(error.message));
    }
  }

  private async answerBridge(
    response: Response,
    user: UserEntity,
    provider: string,
    redirectAfter: string | null,
  ): Promise<void> {
    const { login_id: loginId, ...bundle } = await this.tokens.issue(user, provider);
    const session = this.sessions.issue({
      userId: user.id,
      username: user.username,
      level: user.level,
      email: user.email,
      loginId,
    });
    response.appendHeader('Set-Cookie', session.setCookie);
    this.answerHtml(
      response,
      200,
      tokenBridgePage({
        bundle,
        user: { id: user.id, username: user.username, email: user.email, level: user.level },
        redirectAfter,
      }),
    );
  }

  private answerHtml(response: Response, status: number, body: string): void {
    response
      .status(status)
      .setHeader('Cache-Control', 'no-store')
      .setHeader('Referrer-Policy', 'no-referrer')
      .type('html')
      .send(body);
  }

  private baseUrl(request: Request): string {
    return publicBaseUrl(request, this.options.publicBaseUrl);
  }

  private mailLinkBase(request: Request): string {
    return mailLinkBase(this.options.publicBaseUrl, request.get('host'));
  }

  /** The OAuth state binding cookie (only sent back to `/auth/…`); Max-Age 0 removes it. */
  private oauthStateCookie(value: string, maxAgeSeconds: number): string {
    return [
      `${OAUTH_STATE_COOKIE}=${value}`,
      `Max-Age=${maxAgeSeconds}`,
      'Path=/auth/',
      'HttpOnly',
      'SameSite=Lax',
      ...(this.sessions.secure ? ['Secure'] : []),
    ].join('; ');
  }
}

function oauthProvider(name: string): OAuthProviderName {
  if (!(OAUTH_PROVIDERS as readonly string[]).includes(name))
    throw new PlatformError('NOT_FOUND', `Unknown login provider "${name}" (discord, google)`);
  return name as OAuthProviderName;
}

/** The fields of an urlencoded form body (the confirm page posts one); the JSON parser leaves those unread. */
async function formFields(request: Request): Promise<URLSearchParams | null> {
  if (!/application\/x-www-form-urlencoded/i.test(request.get('content-type') ?? '') || request.readableEnded)
    return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 8192) throw new PlatformError('PAYLOAD_TOO_LARGE', 'Form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
