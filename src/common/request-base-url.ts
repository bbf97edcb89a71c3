import { createParamDecorator, Inject, Injectable, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import type { Request } from 'express';
import { REGISTRY_CONFIG } from '../config/config.module.js';
import type { RegistryConfig } from '../config/config.js';

/** The origin the request was sent to, as this process saw it (scheme and Host header). */
export function requestOrigin(request: Pick<Request, 'protocol' | 'get'>): string {
  return `${request.protocol}://${request.get('host')}`;
}

/** The base URL for links in a response: PUBLIC_BASE_URL when set (behind a proxy), else the request's own origin. */
export function publicBaseUrl(request: Pick<Request, 'protocol' | 'get'>, configured: string | null): string {
  return configured ?? requestOrigin(request);
}

const RequestForBaseUrl = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  context.switchToHttp().getRequest<Request>(),
);

@Injectable()
export class RequestBaseUrlPipe implements PipeTransform<Request, string> {
  constructor(@Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig) {}

  transform(request: Request): string {
    return publicBaseUrl(request, this.registry.publicBaseUrl);
  }
}

/** `handler(@RequestBaseUrl() baseUrl: string)`: the base URL links in the response start with (see publicBaseUrl). */
export const RequestBaseUrl = (): ParameterDecorator => RequestForBaseUrl(RequestBaseUrlPipe);
