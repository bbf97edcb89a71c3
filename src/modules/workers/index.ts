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
