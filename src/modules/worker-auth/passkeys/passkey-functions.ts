import { Inject, Injectable } from '@nestjs/common';
import { PlatformError } from '../../../common/errors.js';
import { currentCaller, Export, Result } from '../../app-core/index.js';
import { TokensService } from '../tokens.service.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from '../worker-auth.options.js';
import { PasskeysService } from './passkeys.service.js';
import { relyingPartyFor, type RelyingParty } from './webauthn-wire.js';

/** The part of the HTTP worker's `request` keyword argument these functions read. */
interface CallRequest {
  headers?: Record<string, string | string[] | undefined>;
}

/**
 * The original web client sends fields of its own beside the credential (`username`, `displayName`, and more in
 * older builds); the functions take them all and read only what they need, so none turns a login into an error.
 */
type Extra = Record<string, unknown>;

const MODULE = 'CloudM.Auth';

/**
 * Passkeys as the original web client calls them: `/api/CloudM.Auth/passkey_register_start|finish` (a signed-in
 * user), `passkey_login_start|finish` (anyone; a login issues WorkerAuth's bundle, like a magic link),
 * `list_passkeys` and `delete_passkey` (own passkeys). Failures are Results with the HTTP status as exec_code
 * and the reason in `info.help_text`, which is what the client shows.
 */
@Injectable()
export class PasskeyFunctions {
  constructor(
    private readonly passkeys: PasskeysService,
    private readonly tokens: TokensService,
    @Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig,
  ) {}

  @Export({
    modName: MODULE,
    name: 'passkey_register_start',
    api: true,
    level: 1,
    apiMethods: ['POST'],
    requestAsKwarg: true,
    test: false,
    helper: 'creation options for a new passkey of the signed-in user',
  })
  passkeyRegisterStart({ request, ..._extra }: { request?: CallRequest } & Extra): Promise<Result> {
    return answer(async () => this.passkeys.registrationOptions(callerUserId(), this.relyingParty(request)));
  }

  @Export({
    modName: MODULE,
    name: 'passkey_register_finish',
    api: true,
    level: 1,
    apiMethods: ['POST'],
    requestAsKwarg: true,
    test: false,
    helper: "stores the signed-in user's new passkey",
  })
  passkeyRegisterFinish({
    credential,
    name,
    request,
    ..._extra
  }: { credential?: unknown; name?: unknown; request?: CallRequest } & Extra): Promise<Result> {
    return answer(async () => {
      if (credential === undefined) throw new PlatformError('BAD_REQUEST', 'Challenge and credential required');
      const { passkey } = await this.passkeys.register(callerUserId(), credential, this.relyingParty(request), name);
      return { success: true, credential_id: passkey.credentialId, name: passkey.name };
    });
  }

  @Export({
    modName: MODULE,
    name: 'passkey_login_start',
    api: true,
    // A login: a stale cookie or expired token in the browser must not turn it into a 401.
    ignoreCredentials: true,
    apiMethods: ['POST'],
    requestAsKwarg: true,
    test: false,
    helper: 'request options for a login with a passkey',
  })
  passkeyLoginStart({ request, ..._extra }: { request?: CallRequest } & Extra): Promise<Result> {
    return answer(() => this.passkeys.authenticationOptions(this.relyingParty(request)));
  }

  @Export({
    modName: MODULE,
    name: 'passkey_login_finish',
    api: true,
    // A login: a stale cookie or expired token in the browser must not turn it into a 401.
    ignoreCredentials: true,
    apiMethods: ['POST'],
    requestAsKwarg: true,
    test: false,
    helper: 'logs in with a passkey: the access and refresh tokens',
  })
  passkeyLoginFinish({
    credential,
    request,
    ..._extra
  }: { credential?: unknown; request?: CallRequest } & Extra): Promise<Result> {
    return answer(async () => {
      if (credential === undefined) throw new PlatformError('BAD_REQUEST', 'Challenge and credential required');
      const { user } = await this.passkeys.authenticate(credential, this.relyingParty(request));
      const { login_id: _loginId, ...bundle } = await this.tokens.issue(user, 'passkey');
      return {
        authenticated: true,
        user_id: user.id,
        username: user.username,
        email: user.email,
        level: user.level,
        provider: 'passkey',
        ...bundle,
      };
    });
  }

  @Export({
    modName: MODULE,
    name: 'list_passkeys',
    api: true,
    level: 1,
    apiMethods: ['GET', 'POST'],
    test: false,
    helper: "the signed-in user's passkeys (no key material)",
  })
  listPasskeys({ ..._extra }: Extra = {}): Promise<Result> {
    return answer(async () => ({ passkeys: await this.passkeys.list(callerUserId()) }));
  }

  @Export({
    modName: MODULE,
    name: 'delete_passkey',
    api: true,
    level: 1,
    apiMethods: ['POST', 'DELETE'],
    test: false,
    helper: "removes one of the signed-in user's passkeys",
  })
  deletePasskey({ credential_id, ..._extra }: { credential_id?: unknown } & Extra): Promise<Result> {
    return answer(async () => {
      await this.passkeys.remove(callerUserId(), credential_id);
      return { deleted: true, credential_id };
    });
  }

  private relyingParty(request: CallRequest | undefined): RelyingParty {
    const host = request?.headers?.host;
    return relyingPartyFor(this.options.webauthn, typeof host === 'string' ? host : null);
  }
}

/** The platform user running the call, or null (anonymous, or the CLI in process). */
function callerUserId(): string | null {
  return currentCaller()?.userId ?? null;
}

/** The work's value as a successful Result; a refusal as an error Result with its status and code. */
async function answer(work: () => Promise<unknown>): Promise<Result> {
  try {
    return Result.ok(await work());
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    const details = { dataInfo: error.code, data: { code: error.code } };
    return error.status >= 500
      ? Result.defaultInternalError(error.message, error.status, details)
      : Result.defaultUserError(error.message, error.status, details);
  }
}
