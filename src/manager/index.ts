/** @module manager — the process runtime: runs controllers with shared informers, leader election, probes, metrics and graceful shutdown; preflight checks. */
export {
  type Cluster,
  type ClusterChanges,
  ClusterSet,
  type ClusterSetOptions,
  clusterChanges,
} from './cluster-set.ts'
export {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  type LeaderElectionOptions,
  Manager,
  type ManagerOptions,
  type ProcessMonitorFactories,
} from './manager.ts'
export {
  formatPreflight,
  leaderElectionPermissions,
  type PermissionRequirement,
  type PermissionResult,
  type PreflightClient,
  type PreflightReport,
  type PreflightRequirements,
  preflight,
  type ResourceRequirement,
} from './preflight.ts'
export { UnservedResourcesError } from './served-resources.ts'
export {
  DEFAULT_SHUTDOWN_GRACE_PERIOD_MS,
  DEFAULT_SHUTDOWN_SIGNALS,
  onShutdownSignals,
  type ShutdownSignalOptions,
  type SignalSource,
  withGracePeriod,
} from './shutdown.ts'
