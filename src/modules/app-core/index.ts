/** Public API of the application core (what mods, transports and the CLI import). */
export { ACCESS_LEVEL, accessRank, hasAccessLevel } from './access-level.js';
export { AppCoreModule } from './app-core.module.js';
export { APP_CORE_OPTIONS, type AppCoreOptions } from './app-core.options.js';
export { AppCoreService } from './app-core.service.js';
export { CoreMod } from './builtin/core.mod.js';
export { DocsMod } from './builtin/docs.mod.js';
export { DocsService } from './docs/docs.service.js';
export {
  Export,
  Mod,
  EXPORT_METADATA,
  MOD_METADATA,
  readExportOptions,
  readModOptions,
  resolveExportOptions,
  type ExportOptions,
  type HttpMethod,
  type JsonSchema,
  type ModOptions,
  type ResolvedExportOptions,
  type SampleCall,
  type Samples,
} from './export.decorator.js';
export { FootprintTracker, type Footprint } from './footprint.js';
export {
  ArgumentError,
  bindArguments,
  describeFunction,
  httpMethodsFor,
  type FunctionDescription,
  type FunctionEntry,
} from './function-entry.js';
export { FunctionRegistry, type WebsocketHandlers } from './function-registry.js';
export { FunctionRegistryService } from './function-registry.service.js';
export {
  LOCAL_CALLER,
  anonymousCaller,
  callerProblem,
  currentCaller,
  type Caller,
  type CallerTransport,
} from './caller.js';
export {
  EXEC_CODE_FORBIDDEN,
  EXEC_CODE_NOT_FOUND,
  FunctionRunner,
  type FunctionName,
  type RunAnyOptions,
  type RunOptions,
} from './function-runner.js';
export {
  DEFAULT_TEST_TIMEOUT_MS,
  formatTestTable,
  runFunctionTests,
  testCallsFor,
  testRunFailed,
  type FunctionTestRow,
} from './function-test-runner.js';
export { NetworkProbe, type PingMeasurement } from './network-probe.js';
export { ProbeController, geoAnswerFor } from './probe.controller.js';
export { Result, type ResultErrorKind, type ResultWire } from './result.js';
export { runHttp, type RemoteHttpMethod } from './run-http.js';
export { WsChannels, type BroadcastOptions, type LocalWsConnections } from './ws-channels.js';
export { WS_BROKER_TOPIC, readWsCommand, wsFrameText, type WsCommand } from './ws-commands.js';
