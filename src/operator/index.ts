/** @module operator — an operator process as a library: controller-runtime's flags, the logger, a client with rest_client metrics, events, the Manager, `check` and exit codes, in one call. */
// The CLI names an operator needs for flags of its own; flags.ts holds the explicit list.

export {
  clusterRef,
  followClustersFile,
  parseClusterList,
  readClustersFile,
} from './clusters-file.ts'
export * from './flags.ts'
export {
  DEFAULT_RESOURCES,
  type InstallManifestOptions,
  installManifests,
  leaseRules,
  METRICS_AUTH_RULES,
  roleAndBinding,
} from './install-manifests.ts'
export { type OperatorRunOptions, operatorCommand, runOperatorWith } from './operator-command.ts'
export type { OperatorContext, OperatorSpec, ProcessFlags } from './operator-spec.ts'
export { type RbacRule, rulePermissions } from './rule-permissions.ts'
export { envPrefixOf, operatorCheckCommand, operatorManifestsCommand, runOperator } from './run-operator.ts'
export { type OperatorWebhooks, startWebhooks } from './webhooks.ts'
