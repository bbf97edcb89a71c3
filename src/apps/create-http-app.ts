import { Logger, type INestApplication, type LoggerService, type LogLevel } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { jsonBodyMiddleware } from '../common/json-body.js';
import { answerClientErrorsAsJson, rejectLongUrls } from '../common/oversized-requests.js';
import type { Server } from 'node:http';
import type { AuthModuleOptions } from '../auth/auth.options.js';
import { addAuthSecuritySchemes } from '../auth/openapi.js';
import { closeRefusedUploads, RequestBodyInterceptor } from '../common/request-body.js';
import { PlatformExceptionFilter, type ErrorFormat } from '../common/exception.filter.js';
import { operationIdOf } from '../common/openapi.js';
import { requestIdMiddleware } from '../common/request-id.middleware.js';
import { webPagesMiddleware, type WebPages } from '../common/web-assets.js';
import { PlatformValidationPipe } from '../common/validation.pipe.js';
import { gateLayers, mayBeDocsRequest } from './gated-layers.js';
import { webPagesLayer } from './web-pages-layer.js';
import type { LogConfig } from '../config/config.js';
import { platformLoggerFor } from '../logging/platform-logger.js';

/** A service's choices for its HTTP application; everything else (request ids, validation, JSON only) is shared. */
export interface HttpAppOptions {
  title: string;
  description: string;
  logger?: LoggerService | LogLevel[] | false;
  /** Adds Nest's module and route dumps to the default logger (the config's DEBUG). */
  debug?: boolean;
  /** The default logger's format and level (the config's LOG_FORMAT / LOG_LEVEL). */
  log?: LogConfig;
  /** The wire shape of error bodies (error-formats.ts); the registry's `{code,message,detail,request_id}` by default. */
  errorFormat?: ErrorFormat;
  /**
   * Where Swagger UI is served, with the document at `<docsPath>-json` and `<docsPath>-yaml`; `api/docs` by
   * default. A service whose own routes own `/api/…` (the HTTP worker) moves it; `false` serves no docs.
   */
  docsPath?: string | false;
  /** The OpenAPI document's `info.version`. */
  apiVersion?: string;
  /**
   * Which proxies' X-Forwarded-* headers set the request's address, scheme and host (the config's TRUST_PROXY);
   * none by default, so a client cannot claim another address or origin by sending the headers itself.
   */
  trustProxy?: boolean | number | string[];
  /**
   * Largest JSON body accepted (body-parser syntax: `2mb`, or bytes). With `routeBodyLimits`, the cap of the
   * routes that name none, in bytes.
   */
  bodyLimit?: string | number;
  /**
   * Read bodies after the guards rather than before routing (request-body.ts): a request without a valid
   * credential is refused from its headers, before its body is read, and each route's body is capped by the
   * entry its `@BodyLimit(name)` names here (bytes), decided from Content-Length before reading.
   */
  routeBodyLimits?: Record<string, number>;
  /** The strategies the service's AuthModule uses, so the document declares their security schemes (JWT by default). */
  auth?: Pick<AuthModuleOptions, 'strategies' | 'sessionCookie'>;
  /**
   * Cross-origin requests: off unless the service lists the origins it answers (a list, or a function
   * deciding per origin, as the HTTP worker's localhost/Tauri rule).
   */
  cors?: { origins: string[] | ((origin: string) => boolean); credentials?: boolean; maxAgeSeconds?: number } | false;
  /**
   * Close the app on SIGTERM/SIGINT (Nest's shutdown hooks; default true). A service that drains in-flight
   * requests first (the HTTP worker) turns them off and handles the signal itself.
   */
  shutdownHooks?: boolean;
  /** The status of a body that fails validation: 422 (default, the registry seed) or 400 (the manager seed). */
  invalidBodyCode?: 'UNPROCESSABLE_ENTITY' | 'BAD_REQUEST';
  /** The service's web pages (folders of `web/`), served before its routes; the shared `/_tb/` assets come with them. */
  webPages?: WebPages[];
}

export const DEFAULT_DOCS_PATH = 'api/docs';

/** Builds a service's Nest application with the platform's shared HTTP conventions. */
export async function createHttpApp(rootModule: unknown, options: HttpAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(rootModule as never, {
    logger: options.logger === false ? false : (options.logger ?? platformLoggerFor(options.log, options.debug)),
    bodyParser: false,
    forceCloseConnections: true,
  });
  app.set('trust proxy', options.trustProxy ?? false);
  app.set('etag', false);
  app.disable('x-powered-by');
  if (options.cors) {
    const { origins: allowed, credentials, maxAgeSeconds } = options.cors;
    const enableCors = () =>
      app.enableCors({
        origin:
          typeof allowed === 'function'
            ? (origin: string | undefined, answer: (error: Error | null, allow?: boolean) => void) =>
                answer(null, origin !== undefined && allowed(origin))
            : allowed,
        credentials: credentials ?? false,
        ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
      });
    // With a rule (a function), the CORS middleware passes a request without Origin on untouched: it never runs for one.
    // (With a list it still adds `Vary: Origin`.)
    if (typeof allowed === 'function') gateLayers(app, (request) => request.headers.origin !== undefined, enableCors);
    else enableCors();
  }
  app.use(requestIdMiddleware);
  app.use(rejectLongUrls);
  answerClientErrorsAsJson(app.getHttpServer() as Server, options.errorFormat ?? 'registry');
  if (options.webPages?.length) app.use(webPagesLayer(options.webPages, webPagesMiddleware(options.webPages)));
  if (options.routeBodyLimits) {
    if (typeof options.bodyLimit !== 'number') throw new Error('With routeBodyLimits, bodyLimit is a number of bytes');
    app.use(closeRefusedUploads);
    app.useGlobalInterceptors(
      new RequestBodyInterceptor(app.get(Reflector), {
        defaultBytes: options.bodyLimit,
        routes: options.routeBodyLimits,
      }),
    );
  } else app.use(jsonBodyMiddleware(options.bodyLimit ?? '2mb'));
  app.useGlobalFilters(new PlatformExceptionFilter(options.errorFormat ?? 'registry'));
  app.useGlobalPipes(new PlatformValidationPipe(options.invalidBodyCode));
  if (options.shutdownHooks !== false) app.enableShutdownHooks();

  const docsPath = options.docsPath === undefined ? DEFAULT_DOCS_PATH : options.docsPath;
  if (docsPath !== false) {
    const path = docsPath.replace(/^\/+|\/+$/g, '');
    const builder = new DocumentBuilder()
      .setTitle(options.title)
      .setDescription(options.description)
      .setVersion(options.apiVersion ?? '1.0');
    const config = addAuthSecuritySchemes(builder, options.auth ?? { strategies: ['jwt'] }).build();
    // Built on the first request for the docs (then kept): scanning every route costs each worker's start about
    // 50 ms of CPU, and most workers are never asked for their document.
    const document = () => SwaggerModule.createDocument(app, config, { operationIdFactory: operationIdOf });
    // Behind one layer: an API request passes Swagger's ten routes and files with one check of its path.
    gateLayers(app, mayBeDocsRequest(path), () =>
      SwaggerModule.setup(path, app, document, { jsonDocumentUrl: `${path}-json`, yamlDocumentUrl: `${path}-yaml` }),
    );
  }
  return app;
}

/** Where a service listens: its configuration section's host and port. */
export interface ListenAddress {
  host: string;
  port: number;
}

export async function listen(app: INestApplication, address: ListenAddress, name: string): Promise<string> {
  await app.listen(address.port, address.host);
  const bound = app.getHttpServer().address() as { port: number };
  const host = address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
  const url = `http://${host}:${bound.port}`;
  new Logger(name).log(`listening on ${url}`);
  return url;
}
