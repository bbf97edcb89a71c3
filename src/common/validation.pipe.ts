import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { PlatformError, type FieldError } from './errors.js';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Validation at the edge, once. Bad query or path parameters are 400 BAD_REQUEST; an invalid body is
 * 422 UNPROCESSABLE_ENTITY (the registry seed), or 400 for a service whose seed says so (the worker manager);
 * both list every field problem in `errors`.
 */
export class PlatformValidationPipe extends ValidationPipe {
  constructor(private readonly invalidBodyCode: 'UNPROCESSABLE_ENTITY' | 'BAD_REQUEST' = 'UNPROCESSABLE_ENTITY') {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => new PlatformError(invalidBodyCode, 'Validation failed', flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof PlatformError && metadata.type !== 'body') {
        const fields = error.fieldErrors ?? [];
        const summary = fields.map((field) => `${field.field}: ${field.message}`).join('; ');
        throw new PlatformError(
          'BAD_REQUEST',
          summary ? `Invalid parameters: ${summary}` : 'Invalid parameters',
          fields,
        );
      }
      if (error instanceof PlatformError && error.fieldErrors?.length) {
        const summary = error.fieldErrors.map((field) => `${field.field}: ${field.message}`).join('; ');
        throw new PlatformError(this.invalidBodyCode, `Validation failed: ${summary}`, error.fieldErrors);
      }
      throw error;
    }
  }
}

const sharedPipe = new PlatformValidationPipe();

/** Validates a plain object as a DTO outside parameter binding (JSON inside multipart, dual-format routes). */
export async function validateAs<T extends object>(type: new () => T, value: unknown): Promise<T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PlatformError('UNPROCESSABLE_ENTITY', 'Request body must be a JSON object');
  }
  return (await sharedPipe.transform(value, { type: 'body', metatype: type })) as T;
}
