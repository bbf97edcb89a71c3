import { Logger, type INestApplication, type LoggerService, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { json } from 'body-parser';
import type { NextFunction, Request, Response } from 'express';
import type { PlatformConfig } from '../config/config.js';
import { PlatformExceptionFilter } from '../common/exception.filter.js';
import { requestIdMiddleware } from '../common/request-id.middleware.js';
import { PlatformValidationPipe } from '../common/validation.pipe.js';
import { PlatformLogger } from '../logging/platform-logger.js';

export interface HttpAppOptions {
  title: string;
  description: string;
  logger?: LoggerService | LogLevel[] | false;
}

/** Builds a service's Nest application with the platform's shared HTTP conventions. */
export async function createHttpApp(rootModule: unknown, config: PlatformConfig, options: HttpAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(rootModule as never, {
    logger: options.logger === false ? false : (options.logger ?? new PlatformLogger({ format: config.logFormat, level: config.logLevel, debug: config.debug })),
    bodyParser: false,
    forceCloseConnections: true,
  });
  app.set('trust proxy', 'loopback');
  app.set('etag', false);
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  // JSON bodies only; multipart uploads are streamed by the routes that take them. GET and HEAD carry
  // no body, so the hottest requests skip the parser entirely.
  const parseJson = json({ limit: '2mb' });
  app.use((request: Request, response: Response, next: NextFunction) =>
    request.method === 'GET' || request.method === 'HEAD' ? next() : parseJson(request, response, next),
  );
  app.useGlobalFilters(new PlatformExceptionFilter());
  app.useGlobalPipes(new PlatformValidationPipe());
  app.enableShutdownHooks();

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle(options.title).setDescription(options.description).setVersion('1.1').addBearerAuth().build(),
  );
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json', yamlDocumentUrl: 'api/docs-yaml' });
  return app;
}

export async function listen(app: INestApplication, config: PlatformConfig, name: string): Promise<string> {
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as { port: number };
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${address.port}`;
  new Logger(name).log(`listening on ${url}`);
  return url;
}
