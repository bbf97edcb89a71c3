export {
  FRAMEWORK_DUMP_CONTEXTS,
  LOG_LEVELS,
  PlatformLogger,
  isLogLevelName,
  type LogFormat,
  type LogLevelName,
  type PlatformLoggerOptions,
} from './platform-logger.js';
export { currentRequestId, runInRequestContext } from './request-context.js';
