import 'reflect-metadata';
import { Body, Controller, Get, Module, NotFoundException, Post, type INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Express } from 'express';
import { IsString } from 'class-validator';
import { PlatformError } from '../common/errors.js';
import { Result } from '../modules/app-core/result.js';
import { createHttpApp, listen, type HttpAppOptions } from './create-http-app.js';
import { operationIdOf } from '../common/openapi.js';
import { addAuthSecuritySchemes } from '../auth/openapi.js';

class EchoBody {
  @IsString()
  name!: string;
}

@Controller('probe')
class ProbeController {
  @Get('conflict')
  conflict(): never {
    throw new PlatformError('CONFLICT', 'Version 1.0.0 already exists');
  }

  @Get('missing')
  missing(): never {
    throw new NotFoundException('No such thing');
  }

  @Get('limited')
  limited(): never {
    throw new PlatformError('RATE_LIMITED', 'Slow down');
  }

  @Get('invalid')
  invalid(): never {
    throw new PlatformError('UNPROCESSABLE_ENTITY', 'Bad fields', [{ field: 'version', message: 'must be semver' }]);
  }

  @Get('crash')
  crash(): never {
    throw new Error('secret internals');
  }

  @Post('echo')
  echo(@Body() body: EchoBody): EchoBody {
    return body;
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

async function serve(options: Partial<HttpAppOptions> = {}): Promise<{ app: INestApplication; base: string }> {
  const app = await createHttpApp(ProbeModule, { title: 'probe', description: 'probe', logger: false, ...options });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, base: `http://127.0.0.1:${port}` };
}

async function call(base: string, path: string, init: RequestInit = {}) {
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

const postJson = (body: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body,
});

describe('createHttpApp', () => {
  const apps: INestApplication[] = [];
  async function start(options: Partial<HttpAppOptions> = {}) {
    const served = await serve(options);
    apps.push(served.app);
    return served.base;
  }
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  describe('error format "registry" (the default)', () => {
    it('answers a domain error with its status and {code, message, detail, request_id}', async () => {
      const base = await start();
      const { status, headers, body } = await call(base, '/probe/conflict');
      expect(status).toBe(409);
      expect(body).toEqual({
        code: 'CONFLICT',
        message: 'Version 1.0.0 already exists',
        detail: 'Version 1.0.0 already exists',
        request_id: headers.get('x-request-id'),
      });
    });

    it('lists field errors and hides internals of a crash', async () => {
      const base = await start({ errorFormat: 'registry' });
      const invalid = await call(base, '/probe/invalid');
      expect(invalid.status).toBe(422);
      expect(invalid.body.errors).toEqual([{ field: 'version', message: 'must be semver' }]);
      const crash = await call(base, '/probe/crash');
      expect(crash.status).toBe(500);
      expect(crash.body.code).toBe('INTERNAL_ERROR');
      expect(JSON.stringify(crash.body)).not.toContain('secret internals');
    });
  });

  describe('error format "result"', () => {
    it('answers with a Result envelope whose exec_code is the status', async () => {
      const base = await start({ errorFormat: 'result' });
      const { status, headers, body } = await call(base, '/probe/missing');
      expect(status).toBe(404);
      expect(body).toEqual({
        error: 'InputError',
        origin: null,
        result: {
          data_to: 'API',
          data_info: 'NOT_FOUND',
          data: { code: 'NOT_FOUND', request_id: headers.get('x-request-id') },
          data_type: 'json',
        },
        info: { exec_code: 404, help_text: 'No such thing' },
      });
      expect(Result.isWire(body)).toBe(true);
      expect(Result.fromWire(body).isError()).toBe(true);
    });

    it('reports a crash as an InternalError with exec_code 500', async () => {
      const base = await start({ errorFormat: 'result' });
      const { status, body } = await call(base, '/probe/crash');
      expect(status).toBe(500);
      expect(body.error).toBe('InternalError');
      expect(body.info.exec_code).toBe(500);
      expect(body.info.help_text).not.toContain('secret internals');
    });
  });

  describe('error format "openai"', () => {
    it('answers {error: {message, type, param, code}} with the status of the code', async () => {
      const base = await start({ errorFormat: 'openai' });
      const limited = await call(base, '/probe/limited');
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({
        error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      });
    });

    it('names the first invalid field as param of an invalid_request_error', async () => {
      const base = await start({ errorFormat: 'openai' });
      const { status, body } = await call(base, '/probe/invalid');
      expect(status).toBe(422);
      expect(body).toEqual({
        error: { message: 'Bad fields', type: 'invalid_request_error', param: 'version', code: 'unprocessable_entity' },
      });
    });
  });

  describe('error format "json-rpc"', () => {
    it('answers a JSON-RPC 2.0 error object with null id', async () => {
      const base = await start({ errorFormat: 'json-rpc' });
      const { status, headers, body } = await call(base, '/probe/missing');
      expect(status).toBe(404);
      expect(body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32601,
          message: 'No such thing',
          data: { code: 'NOT_FOUND', request_id: headers.get('x-request-id') },
        },
      });
    });

    it('uses the parse-error code -32700 for a body that is not JSON', async () => {
      const base = await start({ errorFormat: 'json-rpc' });
      const { status, body } = await call(base, '/probe/echo', postJson('{not json'));
      expect(status).toBe(400);
      expect(body.error.code).toBe(-32700);
      expect(body.error.data.code).toBe('BAD_REQUEST');
    });
  });

  describe('docs path', () => {
    it('serves Swagger at api/docs with -json and -yaml siblings by default, with the given API version', async () => {
      const base = await start({ apiVersion: '2.3' });
      const document = await call(base, '/api/docs-json');
      expect(document.status).toBe(200);
      expect(document.body.info.version).toBe('2.3');
      expect(document.body.paths['/probe/conflict']).toBeDefined();
      expect((await fetch(`${base}/api/docs-yaml`)).status).toBe(200);
    });

    it('moves the docs to the path the service chooses and leaves /api/docs free', async () => {
      const base = await start({ docsPath: '/_platform/docs' });
      expect((await call(base, '/_platform/docs-json')).status).toBe(200);
      expect((await fetch(`${base}/_platform/docs-yaml`)).status).toBe(200);
      expect((await call(base, '/api/docs-json')).status).toBe(404);
      expect((await fetch(`${base}/api/docs`)).status).toBe(404);
    });

    it('adds the docs as one Express layer', async () => {
      const layers = async (options: Partial<HttpAppOptions>) => {
        const { app } = await serve(options);
        apps.push(app);
        return (app.getHttpAdapter().getInstance() as Express).router.stack.length;
      };
      // SwaggerModule.setup adds ten layers, each matched against every API request before its route.
      expect((await layers({})) - (await layers({ docsPath: false }))).toBe(1);
    });

    it('answers every docs request as SwaggerModule.setup on the app itself does', async () => {
      const ours = await start({ apiVersion: '2.3' });
      // The reference: the same app without docs, then Swagger's own setup where createHttpApp calls it.
      const app = await createHttpApp(ProbeModule, {
        title: 'probe',
        description: 'probe',
        logger: false,
        apiVersion: '2.3',
        docsPath: false,
      });
      apps.push(app);
      const builder = new DocumentBuilder().setTitle('probe').setDescription('probe').setVersion('2.3');
      const config = addAuthSecuritySchemes(builder, { strategies: ['jwt'] }).build();
      const document = () => SwaggerModule.createDocument(app, config, { operationIdFactory: operationIdOf });
      SwaggerModule.setup('api/docs', app, document, {
        jsonDocumentUrl: 'api/docs-json',
        yamlDocumentUrl: 'api/docs-yaml',
      });
      await app.listen(0, '127.0.0.1');
      const reference = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      const answer = async (base: string, method: string, path: string) => {
        const response = await fetch(`${base}${path}`, { method, redirect: 'manual' });
        const text = (await response.text()).replace(/"request_id":"[^"]*"/, '');
        return {
          status: response.status,
          type: response.headers.get('content-type'),
          location: response.headers.get('location'),
          length: response.headers.get('content-length'),
          text,
        };
      };
      const paths = [
        '/api/docs',
        '/api/docs/',
        '/api/docs/index.html',
        '/API/Docs',
        '/api/docs?x=1',
        '/api/docs/swagger-ui-init.js',
        '/api/docs/docs/swagger-ui-init.js',
        '/api/docs/swagger-ui.css',
        '/api/docs/docs/swagger-ui.css',
        '/api/docs/LICENSE',
        '/api/docs/absent.js',
        '/api/docs-json',
        '/Api/Docs-Json',
        '/api/docs-yaml',
        '/api/docsx',
        '/api/doc',
        '/probe/missing',
      ];
      for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'])
        for (const path of paths) {
          const [mine, theirs] = [await answer(ours, method, path), await answer(reference, method, path)];
          expect({ method, path, ...mine }).toEqual({ method, path, ...theirs });
        }
    });

    it('serves no docs when docsPath is false', async () => {
      const base = await start({ docsPath: false });
      expect((await call(base, '/api/docs-json')).status).toBe(404);
    });
  });

  describe('body limit and CORS', () => {
    it('refuses a JSON body over the service body limit with 413', async () => {
      const base = await start({ bodyLimit: 64 });
      const small = await call(base, '/probe/echo', postJson(JSON.stringify({ name: 'x' })));
      expect(small.status).toBe(201);
      const large = await call(base, '/probe/echo', postJson(JSON.stringify({ name: 'x'.repeat(200) })));
      expect(large.status).toBe(413);
      expect(large.body.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('sends no CORS headers by default', async () => {
      const base = await start();
      const { headers } = await call(base, '/probe/missing', { headers: { origin: 'https://app.example' } });
      expect(headers.get('access-control-allow-origin')).toBeNull();
    });

    it('allows the listed origins only when CORS is on', async () => {
      const base = await start({ cors: { origins: ['https://app.example'] } });
      const allowed = await call(base, '/probe/missing', { headers: { origin: 'https://app.example' } });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const other = await call(base, '/probe/missing', { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('listen', () => {
    it("listens on the host and port of the service's configuration section and returns its URL", async () => {
      const app = await createHttpApp(ProbeModule, { title: 'probe', description: 'probe', logger: false });
      apps.push(app);
      const url = await listen(app, { host: '127.0.0.1', port: 0 }, 'Probe');
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await call(url, '/probe/missing')).status).toBe(404);
    });
  });
});
