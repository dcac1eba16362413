/** @module manager — the process runtime: runs controllers with shared informers, leader election, probes, metrics and graceful shutdown; preflight checks. */

export { DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './cache-sync.ts'
export {
  type Cluster,
  type ClusterChanges,
  ClusterSet,
  type ClusterSetOptions,
  clusterChanges,
} from './cluster-set.ts'
export { Manager } from './manager.ts'
export type { LeaderElectionOptions, ManagerOptions, ProcessMonitorFactories } from './manager-options.ts'
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
