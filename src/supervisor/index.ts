export { RestartBackoff, type RestartBackoffOptions } from './restart-backoff.js';
export {
  Supervisor,
  systemClock,
  type ChildHandle,
  type ChildLauncher,
  type ChildState,
  type ReadinessOptions,
  type SupervisedChild,
  type SupervisorClock,
  type SupervisorEvent,
  type SupervisorOptions,
} from './supervisor.js';
export {
  EXIT_WITH_PARENT_IMPORT,
  ORPHANED_EXIT_CODE,
  bindToProcess,
  childProcessHandle,
  clusterLauncher,
  clusterWorkerHandle,
  forkLauncher,
  type ForkLauncherOptions,
} from './node-launchers.js';
