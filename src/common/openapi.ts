import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

/** OpenAPI building blocks shared by every service: the error body, error responses, binary bodies, operation ids. */

export class FieldErrorDto {
  @ApiProperty({ type: String, example: 'name' })
  field: string;

  @ApiProperty({ type: String, example: 'must be 1–100 letters, digits, ".", "_" or "-"' })
  message: string;
}

/** The registry's error body (`PlatformExceptionFilter`): `detail` repeats `message` for the existing client. */
export class ErrorResponseDto {
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'NOT_FOUND' })
  code: ErrorCode;

  @ApiProperty({ type: String, example: 'Package "CloudM" not found' })
  message: string;

  @ApiProperty({ type: String, example: 'Package "CloudM" not found' })
  detail: string;

  @ApiProperty({ type: String, example: '7f0c5a3e-…' })
  request_id: string;

  @ApiPropertyOptional({ type: () => [FieldErrorDto], description: 'Per-field problems of a rejected body or query' })
  errors?: FieldErrorDto[];
}

/** Error statuses a route documents, each with its cause; the body is always `ErrorResponseDto`. */
export const ApiErrors = (
  causes: Partial<Record<400 | 401 | 403 | 404 | 409 | 413 | 415 | 416 | 422 | 429 | 502 | 503, string>>,
) =>
  applyDecorators(
    ...Object.entries(causes).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, type: ErrorResponseDto }),
    ),
  );

const BINARY = { type: 'string', format: 'binary' } as const;

/** A 200 whose body is a file of the given media types, not JSON. */
export const ApiFileResponse = (description: string, ...mediaTypes: string[]) =>
  ApiResponse({
    status: 200,
    description,
    content: Object.fromEntries(mediaTypes.map((mediaType) => [mediaType, { schema: BINARY }])),
  });

/** A 200 that is a file by default and `json` when the client asks for `application/json`. */
export const ApiFileOrJsonResponse = (description: string, fileMediaType: string, json: Type<unknown>) =>
  applyDecorators(
    ApiExtraModels(json),
    ApiResponse({
      status: 200,
      description,
      content: { [fileMediaType]: { schema: BINARY }, 'application/json': { schema: { $ref: getSchemaPath(json) } } },
    }),
  );

function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toLowerCase();
}

/**
 * Stable operation ids, `<controller>_<method>` in snake case: `PackagesController.list` → `packages_list`.
 * A method served on several paths (the documented paths plus the existing client's) is listed once per path;
 * Nest names those `method[index]`, which become `method` for the first path and `method_<index>` after.
 */
export function operationIdOf(controllerKey: string, methodKey: string): string {
  const controller = snakeCase(controllerKey.replace(/Controller$/, ''));
  const [, method, alias] = /^(.*?)(?:\[(\d+)\])?$/.exec(methodKey)!;
  return [controller, snakeCase(method), alias && alias !== '0' ? alias : ''].filter(Boolean).join('_');
}
