import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/openapi.js';

export const ACCESS_METADATA = 'platform:access';

export interface AccessRule {
  /** No token needed; a valid token still identifies the caller. */
  public?: boolean;
  /** Ignore any Authorization header (signed URLs: clients attach tokens everywhere). */
  ignoreToken?: boolean;
  admin?: boolean;
}

/** Opts a route out of the default "authenticated" rule. */
export const Public = (options: { ignoreToken?: boolean } = {}) =>
  SetMetadata(ACCESS_METADATA, { public: true, ignoreToken: options.ignoreToken ?? false } satisfies AccessRule);

/** States the need (and documents it in OpenAPI): a valid bearer token, and optionally an admin. */
export const Authenticated = (options: { admin?: boolean } = {}) =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, { admin: options.admin ?? false } satisfies AccessRule),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ description: 'Missing, expired or invalid bearer token', type: ErrorResponseDto }),
    ...(options.admin ? [ApiForbiddenResponse({ description: 'Admin required', type: ErrorResponseDto })] : []),
  );
