import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

/**
 * An optional body field that may be left out but not sent as `null`: unlike `@IsOptional()`, a `null`
 * still runs the field's other checks and so answers 422 instead of reaching the service.
 */
export const IsOmittable = () => ValidateIf((_object, value) => value !== undefined);

const HTTP_URL = /^https?:\/\/\S+$/;

/** An optional http(s) URL field of at most 500 characters (homepage, repository). */
export const OptionalHttpUrl = (field: string, example: string) =>
  applyDecorators(
    ApiPropertyOptional({ example, maxLength: 500 }),
    IsOmittable(),
    IsString(),
    Matches(HTTP_URL, { message: `${field} must be an http(s) URL` }),
    MaxLength(500),
  );
