import { All, Controller, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/access.decorators.js';
import { FunctionGateway } from './function-gateway.js';

/** `/api/{module}/{function}`: every application-core function registered with `api: true`. */
@ApiTags('functions')
@Public()
@Controller('api')
export class FunctionApiController {
  constructor(private readonly gateway: FunctionGateway) {}

  @All(':module/:function')
  @ApiExcludeEndpoint()
  async call(
    @Param('module') moduleName: string,
    @Param('function') functionName: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.gateway.handle(moduleName, functionName, request, response);
  }
}
