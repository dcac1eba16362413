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
  DEFAULT_START_TIMEOUT_MS,
  EXISTING_CLUSTER_ENV,
  resolveTestEnvironmentOptions,
  startTestEnvironment,
  TestEnvironment,
  type TestEnvironmentOptions,
} from './test-environment.ts'
