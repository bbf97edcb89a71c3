import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject, type SwaggerCustomOptions } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/** `path` as a case-insensitive regular expression matching it at the start of a string. */
function startsWith(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i');
}

/**
 * Swagger UI and the OpenAPI document (`SwaggerModule.setup` at `/<path>`, `/<path>-json`, `/<path>-yaml`) as one
 * Express layer, in the place where setup would have added its own. Setup adds ten (the UI page at three paths, its
 * init script at two, the LICENSE refusal, the JSON and YAML documents, the UI's static files at two mounts), all
 * before any controller's route, so every API request was matched against each of them. Here they are registered in
 * the same order on a router of their own, which a request reaches only when its path starts with `/<path>`
 * (case-insensitively, as Express matches routes) and its method is GET or HEAD, the only methods those routes and
 * the static files answer; any other request passes at once, as it passed each of the ten layers before.
 */
export function setupSwaggerLayer(
  app: NestExpressApplication,
  path: string,
  document: () => OpenAPIObject,
  options: SwaggerCustomOptions,
): void {
  const router = express.Router();
  const adapter = app.getHttpAdapter();
  // What SwaggerModule.setup uses of the application (no global prefix: the platform's services set none).
  const routerAdapter = {
    getType: () => adapter.getType(),
    getRequestUrl: (request: Request) => adapter.getRequestUrl!(request),
    get: (route: string, handler: RequestHandler) => router.get(route, handler),
  };
  const target = {
    getHttpAdapter: () => routerAdapter,
    // As ExpressAdapter.useStaticAssets with a prefix.
    useStaticAssets: (folder: string, staticOptions: { prefix: string }) =>
      router.use(staticOptions.prefix, express.static(folder, staticOptions as Parameters<typeof express.static>[1])),
  };
  SwaggerModule.setup(path, target as unknown as INestApplication, document, options);
  const ownsPath = startsWith(`/${path}`);
  app.use((request: Request, response: Response, next: NextFunction) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !ownsPath.test(request.path)) return next();
    router(request, response, next);
  });
}
