export {
  ManagerProcess,
  managerStatePath,
  probeHealth,
  processAlive,
  readManagerState,
  runningManager,
  type ManagerProcessOptions,
  type ManagerStateFile,
} from './manager-process.js';
export {
  WorkerManager,
  newWorkerId,
  type HealthProbeResult,
  type WorkerManagerEvent,
  type WorkerManagerOptions,
  type WorkerRecord,
  type WorkerSpec,
  type WorkerState,
  type WorkerType,
} from './worker-manager.js';
export { ManagerAdminModule } from './admin/manager-admin.module.js';
export { NoProxy, type ProxyControl, type ProxyStatus, type BackupServer } from './manager-hooks.js';
export { type RollingUpdateState } from './manager-process.js';
export { type ClusterNodeView, type ClusterSummary, type ClusterView, type WorkerInfo } from './cluster-view.js';
export { loadManagerSecret, secretsEqual } from './manager-secret.js';
export { apr1 } from './nginx/apr1.js';
export { renderSiteConfig, type SiteConfigInput } from './nginx/site-config.js';
export {
  NginxProxyControl,
  findNginx,
  nginxArgs,
  nginxPaths,
  nginxVersion,
  patchMainConfig,
  siteInputFor,
  testAndReload,
  testConfig,
  writeHtpasswd,
  writeSite,
  type NginxPaths,
} from './nginx/nginx-setup.js';
export {
  ClusterRegistry,
  nodeId,
  type ClusterNodeRecord,
  type ClusterRegistryOptions,
} from './cluster/cluster-registry.js';
