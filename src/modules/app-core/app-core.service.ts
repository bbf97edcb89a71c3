import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CORE_OPTIONS, type AppCoreOptions } from './app-core.options.js';
import { FunctionRegistryService } from './function-registry.service.js';
import { FunctionRunner } from './function-runner.js';
import { runFunctionTests, type FunctionTestOptions, type FunctionTestRow } from './function-test-runner.js';
import { Result } from './result.js';
import { runHttp, type RemoteHttpMethod } from './run-http.js';
import { WsChannels } from './ws-channels.js';

/**
 * The application core's in-process interface: `runFunction`, `aRunFunction`, `runAny`,
 * `aRunAny` (inherited from `FunctionRunner`), `runHttp` and the function test run.
 */
@Injectable()
export class AppCoreService extends FunctionRunner {
  constructor(
    readonly functions: FunctionRegistryService,
    @Inject(APP_CORE_OPTIONS) private readonly options: AppCoreOptions,
    /** WebSocket connections of every WS worker: send, join/leave channels, broadcast (ws-channels.ts). */
    readonly ws: WsChannels,
  ) {
    const logger = new Logger('AppCore');
    super(functions, {
      dataDir: options.dataDir,
      virtualMode: options.virtualMode,
      logger: { log: (message) => logger.log(message), error: (message, trace) => logger.error(message, trace) },
    });
  }

  /**
   * Runs `moduleName.functionName` on the platform HTTP worker at `httpBaseUrl` (see `runHttp` in
   * run-http.ts for the request and reply mapping). Never throws.
   */
  async runHttp(
    moduleName: string,
    functionName: string,
    method: RemoteHttpMethod = 'GET',
    args: readonly unknown[] = [],
    kwargs: Record<string, unknown> = {},
    options: { headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Result> {
    if (!this.options.httpBaseUrl) return Result.defaultInternalError('no HTTP base URL configured (httpBaseUrl)', -2);
    return runHttp(moduleName, functionName, method, args, kwargs, { baseUrl: this.options.httpBaseUrl, ...options });
  }

  /** Runs every function marked `test` (see function-test-runner.ts); the budget defaults to `testTimeoutMs`. */
  runTests(options: FunctionTestOptions = {}): Promise<FunctionTestRow[]> {
    return runFunctionTests(this.functions, this, { timeoutMs: this.options.testTimeoutMs, ...options });
  }
}
