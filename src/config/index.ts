/** @module config — cluster configuration: kubeconfig files, in-cluster settings and credential providers. */
export type { ClusterConfig, CredentialProvider, Credentials, TlsConfig } from './cluster-config.ts'
export {
  DEFAULT_BETA_INTERACTIVE_MODE,
  EXEC_API_VERSIONS,
  EXEC_INTERACTIVE_MODES,
  type ExecClusterInfo,
  ExecCredentialProvider,
  type ExecCredentialProviderOptions,
  type ExecPluginConfig,
} from './exec-credentials.ts'
export {
  EXEC_PLUGIN_TIMEOUT_MS,
  type ExecRunner,
  type ExecRunRequest,
  type ExecRunResult,
  MAX_EXEC_PLUGIN_STDOUT_BYTES,
  spawnExecPlugin,
} from './exec-plugin-runner.ts'
export {
  IN_CLUSTER_CA_FILE,
  IN_CLUSTER_NAMESPACE_FILE,
  IN_CLUSTER_TOKEN_FILE,
  type InClusterOptions,
  isInCluster,
  loadInClusterConfig,
  SERVICE_ACCOUNT_DIR,
} from './in-cluster.ts'
export {
  buildClusterConfig,
  type KubeconfigBuildOptions,
  type KubeconfigOptions,
  loadKubeconfig,
} from './kubeconfig.ts'
export {
  EXEC_CLUSTER_EXTENSION,
  type ExecSection,
  type ResolvedAuth,
  type ResolvedContext,
  resolveContext,
} from './kubeconfig-context.ts'
export {
  decodeBase64,
  type KubeconfigFile,
  type KubeconfigSet,
  mergeKubeconfigs,
  type Named,
  parseKubeconfig,
  readKubeconfigFiles,
} from './kubeconfig-files.ts'
export { type LoadClusterConfigOptions, loadClusterConfig, RECOMMENDED_HOME_KUBECONFIG } from './load.ts'
export { DEFAULT_NAMESPACE } from './namespace.ts'
export type { ReadTextFile } from './read-text-file.ts'
export {
  basicAuthProvider,
  clientCertificateProvider,
  StaticCredentialProvider,
  staticTokenProvider,
} from './static-credentials.ts'
export {
  TokenFileProvider,
  type TokenFileProviderOptions,
} from './token-file.ts'
export { toYaml } from './yaml/emit.ts'
export {
  parseYaml,
  type YamlParseOptions,
} from './yaml/yaml.ts'
