import { createParamDecorator, Inject, Injectable, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import type { AuthenticatedRequest } from './principal.js';

/**
 * Provided by a service that has its own view of the caller (the registry: user, admin flag and
 * publisher), exported by that service's module. `@CurrentCaller()` hands its answer to the handler.
 */
export const CALLER_RESOLVER = Symbol('CALLER_RESOLVER');

export interface CallerResolver<C = unknown> {
  of(request: AuthenticatedRequest): Promise<C>;
}

/** The request itself, for the pipe below (a param decorator's factory cannot wait for anything). */
const RequestForCaller = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  context.switchToHttp().getRequest<AuthenticatedRequest>(),
);

/** Pipes are awaited and built by the injector in the controller's module, so the resolver can be async and injected. */
@Injectable()
export class CallerPipe implements PipeTransform<AuthenticatedRequest, Promise<unknown>> {
  constructor(@Inject(CALLER_RESOLVER) private readonly resolver: CallerResolver) {}

  transform(request: AuthenticatedRequest): Promise<unknown> {
    return this.resolver.of(request);
  }
}

/**
 * The caller of this request as the service sees it (for the registry, a `Caller`), resolved once per
 * request by the module's CALLER_RESOLVER: `handler(@CurrentCaller() caller: Caller)`.
 */
export const CurrentCaller = (): ParameterDecorator => RequestForCaller(CallerPipe);
