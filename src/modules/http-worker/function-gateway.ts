import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppCoreService, FunctionRegistryService, Result } from '../app-core/index.js';
import { HTTP_WORKER_OPTIONS, type HttpWorkerOptions } from './http-worker.options.js';

/** Turns an HTTP request into a function call and its outcome into the HTTP answer. */
@Injectable()
export class FunctionGateway {
  constructor(
    private readonly functions: FunctionRegistryService,
    private readonly core: AppCoreService,
    @Inject(HTTP_WORKER_OPTIONS) private readonly options: HttpWorkerOptions,
  ) {}

  async handle(moduleName: string, functionName: string, request: Request, response: Response): Promise<void> {
    const entry = this.functions.get(`${moduleName}.${functionName}`);
    if (entry === undefined || !entry.options.api) {
      response
        .status(404)
        .json(Result.defaultUserError('function not found', 404, { dataInfo: `${moduleName}.${functionName}` }));
      return;
    }
    const outcome = await this.core.runFunction(entry.key, {
      kwargs: { ...(request.query as Record<string, unknown>) },
      caller: { level: 0, userId: null, transport: 'http' },
    });
    response.json(outcome);
  }
}
