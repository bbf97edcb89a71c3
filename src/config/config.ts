import { LOG_FORMATS, type LogConfig } from '../logging/log-config.js';
import type { LoadConfigOptions } from './load-config-options.js';
import {
  readAppCoreSection,
  readModsRegistrySection,
  type AppCoreConfig,
  type ModsRegistryConfig,
} from './sections/app-core.js';
import { ConfigError, EnvironmentReader, type Environment } from './sections/environment-reader.js';
import { readGatewaySection, type GatewayConfig } from './sections/gateway.js';
import { readHttpWorkerSection, type HttpWorkerConfig } from './sections/http-worker.js';
import { readInfrastructureSection, type InfrastructureConfig } from './sections/infrastructure.js';
import { readManagerSection, type ManagerConfig } from './sections/manager.js';
import { readMcpSection, type McpConfig } from './sections/mcp.js';
import { readRegistryListen, readRegistrySection, type RegistryConfig } from './sections/registry.js';
import { readRpcSection, type RpcConfig } from './sections/rpc.js';
import type { ServiceName } from './sections/services.js';
import { readWorkerAuthSection, type WorkerAuthConfig } from './sections/worker-auth.js';
import { readWsWorkerSection, type WsWorkerConfig } from './sections/ws-worker.js';

/*
 * The one place that reads process.env. Each section of the configuration lives in its own file under
 * sections/ with its type, its variables and their validation; loadConfig composes them into one typed,
 * validated PlatformConfig, and start-up fails with one message listing every problem of every section.
 * This file re-exports the sections so callers import the configuration from one place.
 */
export * from './sections/app-core.js';
export * from './sections/environment-reader.js';
export * from './sections/gateway.js';
export * from './sections/http-worker.js';
export * from './sections/infrastructure.js';
export * from './sections/manager.js';
export * from './sections/mcp.js';
export * from './sections/registry.js';
export * from './sections/rpc.js';
export * from './sections/services.js';
export * from './sections/worker-auth.js';
export * from './sections/ws-worker.js';
export type { LoadConfigOptions } from './load-config-options.js';
export { LOG_FORMATS, type LogConfig };

/**
 * The platform's configuration: the infrastructure every service shares (data directory, database, Redis,
 * object storage, logs, the platform secret), then one section per service with its own host and port.
 */
export interface PlatformConfig extends InfrastructureConfig {
  /** The services this configuration was validated for (what `services` asked loadConfig to check). */
  services: ServiceName[];
  registry: RegistryConfig;
  /** HTTP workers serving `/api/{module}/{function}`. */
  httpWorker: HttpWorkerConfig;
  workerAuth: WorkerAuthConfig;
  /** WebSocket workers. */
  wsWorker: WsWorkerConfig;
  /** The worker manager and its admin UI (127.0.0.1:9005 by default). */
  manager: ManagerConfig;
  /** The tool-protocol (MCP) HTTP transport. */
  mcp: McpConfig;
  /** The model gateway: docs/gateway.md. */
  gateway: GatewayConfig;
  /** The application core: app id, installed mods, network probe and `runHttp`. */
  appCore: AppCoreConfig;
  /** The registry `tb mods` installs from and publishes to (TB_REGISTRY_URL, TB_TOKEN). */
  modsRegistry: ModsRegistryConfig;
  /** Peer-to-peer RPC (`tb rpc`, docs/rpc.md). */
  rpc: RpcConfig;
}

/**
 * Reads every section, each recording its problems on the one reader, then fails once with all of them. The
 * order of the sections is the order of the problems in that message.
 */
export function loadConfig(env: Environment = process.env, options: LoadConfigOptions = {}): PlatformConfig {
  const read = new EnvironmentReader(env);
  const registryListen = readRegistryListen(read, options);
  const infrastructure = readInfrastructureSection(read, options);
  const config: PlatformConfig = {
    ...infrastructure,
    services: [...(options.services ?? [])],
    registry: readRegistrySection(read, registryListen, options),
    httpWorker: readHttpWorkerSection(read, infrastructure.dataDir, options),
    wsWorker: readWsWorkerSection(read),
    manager: readManagerSection(read),
    workerAuth: readWorkerAuthSection(read),
    mcp: readMcpSection(read),
    gateway: readGatewaySection(read, infrastructure.database, options),
    appCore: readAppCoreSection(read, infrastructure.dataDir),
    modsRegistry: readModsRegistrySection(read),
    rpc: readRpcSection(read),
  };
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}
