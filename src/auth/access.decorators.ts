import { applyDecorators, type Type } from '@nestjs/common';
import type { Request } from 'express';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ACCESS_LEVEL, accessLevelName } from './access-level.js';
import type { Permission } from './permissions.js';
import { ErrorResponseDto } from '../common/openapi.js';

export const ACCESS_METADATA = 'platform:access';

/** Decides for one request whether its credentials are ignored (see `AccessRule.ignoreTokenWhen`). */
export interface CredentialPolicy {
  ignoresCredentials(request: Request): boolean;
}

/** OpenAPI security scheme names; `addAuthSecuritySchemes` declares them on the document. */
export const API_KEY_SECURITY = 'api_key';
export const SESSION_COOKIE_SECURITY = 'session_cookie';
export const CLUSTER_SECRET_SECURITY = 'cluster_secret';

export interface AccessRule {
  /** No credential needed; a valid one still identifies the caller (a bad one is a 401). */
  public?: boolean;
  /** Ignore any credential (signed URLs: clients attach tokens everywhere). */
  ignoreToken?: boolean;
  /**
   * A provider that decides per request whether to ignore credentials (one route serving many functions,
   * some of which are login or refresh functions). The guard looks it up once and asks it each time.
   */
  ignoreTokenWhen?: Type<CredentialPolicy>;
  admin?: boolean;
  /** An API key permission the caller needs (admin implies every permission). */
  permission?: Permission;
  /** The access level the caller needs, by the non-monotonic rule (ADMIN -1 passes every level). */
  level?: number;
}

/**
 * Adds to the route's (or controller's) rule instead of replacing it, so `@Authenticated()` and
 * `@RequireLevel()` can be stacked in any order.
 */
function mergeAccess(rule: AccessRule): ClassDecorator & MethodDecorator {
  const decorate = (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder: object = descriptor ? descriptor.value : target;
    Reflect.defineMetadata(
      ACCESS_METADATA,
      { ...(Reflect.getMetadata(ACCESS_METADATA, holder) ?? {}), ...rule },
      holder,
    );
  };
  return decorate as ClassDecorator & MethodDecorator;
}

const unauthorizedResponse = ApiUnauthorizedResponse({
  description: 'Missing, expired or invalid credential',
  type: ErrorResponseDto,
});

/** Opts a route out of the default "authenticated" rule. */
export const Public = (options: { ignoreToken?: boolean; ignoreTokenWhen?: Type<CredentialPolicy> } = {}) =>
  mergeAccess({
    public: true,
    ignoreToken: options.ignoreToken ?? false,
    ...(options.ignoreTokenWhen ? { ignoreTokenWhen: options.ignoreTokenWhen } : {}),
  });

/** States the need (and documents it in OpenAPI): a valid credential, and optionally an admin. */
export const Authenticated = (options: { admin?: boolean } = {}) =>
  applyDecorators(
    mergeAccess({ admin: options.admin ?? false }),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ description: 'Missing, expired or invalid bearer token', type: ErrorResponseDto }),
    ...(options.admin ? [ApiForbiddenResponse({ description: 'Admin required', type: ErrorResponseDto })] : []),
  );

/** An API key with this permission (read, write, execute, admin; admin implies the rest). */
export const RequirePermission = (permission: Permission) =>
  applyDecorators(
    mergeAccess({ permission }),
    ApiSecurity(API_KEY_SECURITY),
    ApiBearerAuth(),
    ApiExtension('x-required-permission', permission),
    unauthorizedResponse,
    ApiForbiddenResponse({
      description: `Needs permission "${permission}" (an admin key holds every permission)`,
      type: ErrorResponseDto,
    }),
  );

/**
 * A caller at this access level or above, by the platform's rule: ADMIN (-1) passes every level, the rest
 * compare by number. NOT_LOGGED_IN (0) admits anonymous callers.
 */
export const RequireLevel = (level: number) =>
  applyDecorators(
    mergeAccess(level === ACCESS_LEVEL.NOT_LOGGED_IN ? { level, public: true } : { level }),
    ApiBearerAuth(),
    ApiCookieAuth(SESSION_COOKIE_SECURITY),
    ApiExtension('x-required-level', level),
    ...(level === ACCESS_LEVEL.NOT_LOGGED_IN
      ? []
      : [
          unauthorizedResponse,
          ApiForbiddenResponse({
            description: `Needs access level ${accessLevelName(level)} (${level}) or higher; ADMIN (-1) passes`,
            type: ErrorResponseDto,
          }),
        ]),
  );
