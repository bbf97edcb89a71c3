import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

const HTTP_URL = /^https?:\/\/\S+$/;

/** An optional http(s) URL field of at most 500 characters (homepage, repository). */
export const OptionalHttpUrl = (field: string, example: string) =>
  applyDecorators(
    ApiPropertyOptional({ example, maxLength: 500 }),
    IsOptional(),
    IsString(),
    Matches(HTTP_URL, { message: `${field} must be an http(s) URL` }),
    MaxLength(500),
  );
