import { All, Controller, Delete, Get, HttpCode, Post, Put, Req, Res, applyDecorators } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiInternalServerErrorResponse,
  ApiMethodNotAllowedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/access.decorators.js';
import { FunctionGateway } from './function-gateway.js';
import { ResultWireDto } from './http-worker.responses.js';

const ROUTE = ':module/:function';

/** The shared documentation of the four documented methods of `/api/{module}/{function}`. */
const FunctionRoute = (method: string) =>
  applyDecorators(
    ApiOperation({
      summary: `Run an application-core function (${method})`,
      description:
        'kwargs come from the query string, then form fields (urlencoded, or multipart with files streamed to disk), then the JSON body (a later source wins). ' +
        'Answers the whole Result as JSON, or by its data_type: html, redirect, file/binary (attachment), stream (server-sent events or chunked).',
    }),
    ApiParam({ name: 'module', description: 'Module name; may contain dots (CloudM.Auth)' }),
    ApiParam({ name: 'function', description: 'Function name' }),
    ApiOkResponse({ description: 'The Result (or its natural response by data_type)', type: ResultWireDto }),
    ApiUnauthorizedResponse({ description: 'The function needs a session', type: ResultWireDto }),
    ApiForbiddenResponse({ description: "The session's level is too low", type: ResultWireDto }),
    ApiNotFoundResponse({ description: 'No such function, or not registered with api: true', type: ResultWireDto }),
    ApiMethodNotAllowedResponse({
      description: 'The function does not answer this method (see Allow)',
      type: ResultWireDto,
    }),
    ApiPayloadTooLargeResponse({ description: 'An upload over HTTP_UPLOAD_MAX_BYTES', type: ResultWireDto }),
    ApiInternalServerErrorResponse({ description: 'The function failed; carries request_id', type: ResultWireDto }),
  );

/**
 * `/api/{module}/{function}`: every application-core function registered with `api: true`. The gateway reads the
 * two path segments from `request.params` itself: `@Param` arguments would run the global validation pipe on every
 * request for two strings the route has already matched (the OpenAPI document names them through `ApiParam`).
 */
@ApiTags('functions')
@ApiExtraModels(ResultWireDto)
@Public({ ignoreTokenWhen: FunctionGateway })
@Controller('api')
export class FunctionApiController {
  constructor(private readonly gateway: FunctionGateway) {}

  @Get(ROUTE)
  @FunctionRoute('GET')
  get(@Req() request: Request, @Res() response: Response) {
    return this.gateway.handle(request, response);
  }

  @Post(ROUTE)
  @HttpCode(200)
  @FunctionRoute('POST')
  post(@Req() request: Request, @Res() response: Response) {
    return this.gateway.handle(request, response);
  }

  @Put(ROUTE)
  @FunctionRoute('PUT')
  put(@Req() request: Request, @Res() response: Response) {
    return this.gateway.handle(request, response);
  }

  @Delete(ROUTE)
  @FunctionRoute('DELETE')
  delete(@Req() request: Request, @Res() response: Response) {
    return this.gateway.handle(request, response);
  }

  /** Any other method (PATCH, OPTIONS without CORS …): 405 with Allow, or 404 for an unknown function. */
  @All(ROUTE)
  @ApiExcludeEndpoint()
  other(@Req() request: Request, @Res() response: Response) {
    return this.gateway.handle(request, response);
  }
}
