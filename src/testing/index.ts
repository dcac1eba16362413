/**
 * @module testing — `edgeop/testing`: a real etcd + kube-apiserver for an operator's tests (like
 * controller-runtime's envtest), CRD installation, wait helpers, per-test namespaces and the fake clock.
 * Not part of `edgeop` itself: nothing in the library or the operator artifact imports it.
 */
export {
  AssetsUnavailableError,
  type Binaries,
  type BinaryName,
  CACHE_DIR_ENV,
  CONTROL_PLANE_BINARIES,
  cachedBinaryDir,
  cacheRoot,
  type ResolveOptions,
  resolveBinaries,
  TEST_ASSETS_ENV,
  type Versions,
} from './assets.ts'
export {
  CRD_FIELD_MANAGER,
  CRD_FILE_EXTENSIONS,
  type CrdSource,
  DEFAULT_CRD_INSTALL_TIMEOUT_MS,
  type InstallCrdsOptions,
  installCrds,
  readCrds,
} from './crds.ts'
export {
  DEFAULT_EVENTUALLY_INTERVAL_MS,
  DEFAULT_EVENTUALLY_TIMEOUT_MS,
  type EventuallyOptions,
  eventually,
  type WaitForOptions,
  waitFor,
} from './eventually.ts'
export { ManualClock } from './manual-clock.ts'
export { createTestNamespace, TEST_NAMESPACE_LABEL, testNamespaceName } from './namespace.ts'
export {
  ApiServerModel,
  type Exchange,
  type Interception,
  type Interceptor,
  type WriteObserver,
} from './sim/api-server-model.ts'
export { DEFAULT_ROLLOUT_MS, deploymentRollouts } from './sim/deployment-rollouts.ts'
export {
  DEFAULT_FAULT_INTERVAL_MS,
  FAULT_KINDS,
  type Fault,
  type FaultKind,
  type FaultOptions,
  MAX_FAULT_MS,
} from './sim/fault-plan.ts'
export { GC_DELAY_MS } from './sim/garbage-collector.ts'
export {
  DEFAULT_HISTORY_EVENTS,
  ObjectStore,
  type ResourceRules,
  type SpecSchema,
  type StoreEvent,
  type WriteContext,
} from './sim/object-store.ts'
export { Prng } from './sim/prng.ts'
export { expectSimulation, failureReport, MAX_MINIMIZE_RUNS, simulationSeeds } from './sim/replay.ts'
export type { RequestTarget } from './sim/request-target.ts'
export { DEFAULT_RESTART_MS, DEFAULT_SETTLE_MS, SEED_ENV, SKIP_ENV, simulate } from './sim/simulate.ts'
export type {
  Invariant,
  ProcessContext,
  SimulatedCluster,
  SimulatedProcess,
  SimulatedResource,
  SimulatedWrite,
  SimulationFailure,
  SimulationOptions,
  SimulationResult,
  WriteInvariant,
} from './sim/simulation-options.ts'
export type { TraceEntry } from './sim/trace.ts'
export { SIMULATION_EPOCH_MS, VirtualClock } from './sim/virtual-clock.ts'
export { BOOKMARK_INTERVAL_MS, type WatchView } from './sim/watch-session.ts'
export {
  DEFAULT_START_TIMEOUT_MS,
  EXISTING_CLUSTER_ENV,
  resolveTestEnvironmentOptions,
  startTestEnvironment,
  TestEnvironment,
  type TestEnvironmentOptions,
} from './test-environment.ts'
