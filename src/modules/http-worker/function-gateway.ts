import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { effectiveLevel } from '../../auth/access-check.js';
import type { CredentialPolicy } from '../../auth/access.decorators.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { requestIdOf } from '../../common/request-id.middleware.js';
import {
  AppCoreService,
  FunctionRegistryService,
  Result,
  httpMethodsFor,
  type Caller,
  type FunctionEntry,
} from '../app-core/index.js';
import { decideAccess } from './function-access.js';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';
import { queryArguments, readRequestArguments, type RequestArguments } from './request-kwargs.js';
import { sendOutcome } from './result-response.js';

/** What a function registered with `request_as_kwarg` receives as its `request` keyword argument. */
export interface FunctionRequest {
  method: string;
  path: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  content_type: string | null;
  query: Record<string, unknown>;
  body: unknown;
  /** Uploaded files by form field: `{filename, content_type, path, size, sha256}` (multipart only). */
  files: Record<string, unknown>;
  client_ip: string;
  request_id: string;
  /** The caller's session, or null when anonymous. */
  session: {
    user_id: string;
    user_name: string;
    email: string | null;
    level: number;
    session_id: string | null;
    via: string;
  } | null;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** The methods a function answers, with HEAD wherever GET is (the `Allow` header of a 405). */
function allowedMethods(entry: FunctionEntry): string[] {
  const methods: string[] = httpMethodsFor(entry);
  if (methods.includes('GET')) methods.push('HEAD');
  return methods;
}

/**
 * Turns an HTTP request into an application-core call: 404 unless the function exists with `api: true`,
 * 405 (with `Allow`) for a method it does not answer, 401/403 by the access rule (function-access.ts),
 * then kwargs from query, form and JSON, the caller from the session, and the outcome as HTTP.
 */
@Injectable()
export class FunctionGateway implements CredentialPolicy {
  private readonly methodsCache = new WeakMap<FunctionEntry, string[]>();

  constructor(
    private readonly functions: FunctionRegistryService,
    private readonly core: AppCoreService,
    @Inject(HTTP_WORKER_OPTIONS) private readonly options: HttpWorkerOptions,
  ) {}

  /** Functions registered with `ignoreCredentials` (login, refresh, logout) never see the caller's credentials. */
  ignoresCredentials(request: Request): boolean {
    const { module, function: functionName } = request.params as { module?: string; function?: string };
    const entry = this.functions.get(`${module}.${functionName}`);
    return entry?.options.api === true && entry.options.ignoreCredentials;
  }

  /**
   * Answers `/api/{module}/{function}`. Synchronous from the request to the answer when nothing has to be awaited
   * (a GET or HEAD, a synchronous function, a JSON answer): each promise of the request would otherwise carry the
   * request's async context (AsyncLocalStorage hooks) for nothing.
   */
  handle(request: Request, response: Response): void | Promise<void> {
    const { module: moduleName, function: functionName } = request.params as { module: string; function: string };
    const entry = this.functions.get(`${moduleName}.${functionName}`);
    if (entry === undefined || !entry.options.api) {
      throw new PlatformError('NOT_FOUND', `No API function ${moduleName}.${functionName}`);
    }
    const allowed = this.methodsOf(entry);
    if (!allowed.includes(request.method)) {
      response.setHeader('Allow', allowed.join(', '));
      if (request.method === 'OPTIONS') {
        response.status(204).end();
        return;
      }
      response.status(405).json(
        Result.defaultUserError(`${entry.key} answers ${allowed.join(', ')}, not ${request.method}`, 405, {
          dataInfo: entry.key,
        }),
      );
      return;
    }
    const authenticated = request as Request & AuthenticatedRequest;
    const principal = authenticated.principal;
    const callerLevel = principal ? effectiveLevel(authenticated) : null;
    const decision = decideAccess({
      module: entry.module,
      functionName: entry.functionName,
      required: entry.options.level,
      callerLevel,
      openModules: this.options.openModules,
      credentialsIgnored: entry.options.ignoreCredentials,
    });
    if (!decision.allowed) {
      throw new PlatformError(decision.status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', decision.message);
    }
    const caller: Caller = {
      level: callerLevel ?? 0,
      userId: principal?.platformUserId ?? null,
      transport: 'http',
    };
    if (request.method === 'GET' || request.method === 'HEAD') {
      // No body and nothing to clean up: run and answer without awaiting what is already there.
      const call = queryArguments(request);
      const outcome = this.run(entry, authenticated, call, caller);
      return isThenable(outcome)
        ? Promise.resolve(outcome).then((value) => sendOutcome(value, request, response, requestIdOf(request)))
        : sendOutcome(outcome, request, response, requestIdOf(request));
    }
    return this.handleWithBody(entry, authenticated, response, caller);
  }

  private async handleWithBody(
    entry: FunctionEntry,
    request: Request & AuthenticatedRequest,
    response: Response,
    caller: Caller,
  ): Promise<void> {
    const call = await readRequestArguments(request, response, this.options);
    try {
      const outcome = await this.run(entry, request, call, caller);
      await sendOutcome(outcome, request, response, requestIdOf(request));
    } finally {
      await call.cleanup();
    }
  }

  private run(
    entry: FunctionEntry,
    request: Request & AuthenticatedRequest,
    call: RequestArguments,
    caller: Caller,
  ): unknown {
    return this.core.runFunction(entry.key, {
      kwargs: call.kwargs,
      caller,
      request: entry.options.requestAsKwarg ? this.requestArgument(request, call, requestIdOf(request)) : undefined,
    });
  }

  private methodsOf(entry: FunctionEntry): string[] {
    let methods = this.methodsCache.get(entry);
    if (methods === undefined) {
      methods = allowedMethods(entry);
      this.methodsCache.set(entry, methods);
    }
    return methods;
  }

  private requestArgument(
    request: Request & AuthenticatedRequest,
    call: Pick<RequestArguments, 'body' | 'files'>,
    requestId: string,
  ): FunctionRequest {
    const principal = request.principal;
    return {
      method: request.method,
      path: request.path,
      url: request.originalUrl,
      headers: { ...request.headers },
      content_type: request.headers['content-type'] ?? null,
      query: { ...(request.query as Record<string, unknown>) },
      body: call.body,
      files: call.files,
      client_ip: request.ip ?? request.socket.remoteAddress ?? '',
      request_id: requestId,
      session: principal
        ? {
            user_id: principal.platformUserId,
            user_name: principal.username,
            email: principal.email,
            level: effectiveLevel(request),
            session_id: principal.sessionId ?? null,
            via: principal.strategy,
          }
        : null,
    };
  }
}
