/**
 * @module operator — the AppService controller (informers, predicates, reconciler) and the operator
 * that runs it: `edgeop run`'s flags, events and `check` requirements.
 */
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, type InformerFactory } from '../../cache/index.ts'
import { CORE_TYPES, type KubeClient, type ResourceType } from '../../client/index.ts'
import {
  Controller,
  type ControllerObserver,
  generationChanged,
  type Predicate,
  type RetryPolicy,
} from '../../controller/index.ts'
import type { Clock, KubeObject, Logger } from '../../core/index.ts'
import type { EventRecorder } from '../../objects/index.ts'
import { driftMetrics } from '../../observability/index.ts'
import {
  httpUrl,
  OPERATOR_FLAGS,
  type OperatorSpec,
  stringFlag,
  validateOperatorOptions,
} from '../../operator/index.ts'
import type { QueueMetrics } from '../../queue/index.ts'
import { CircuitBreaker } from '../../resilience/index.ts'
import { APPSERVICES, type AppService, GROUP, KIND } from './api.ts'
import { type DatabaseApi, databaseApi } from './database-api.ts'
import { CHILD_SELECTOR } from './desired.ts'
import { OPERATOR_NAME, operatorRules } from './manifests.ts'
import { appServiceFailureReporter, appServiceReconciler } from './reconcile.ts'

/** Options of {@link appServiceController}. */
export interface AppServiceOperatorOptions {
  client: KubeClient
  factory: InformerFactory
  /** Namespaces to watch; empty = all. */
  namespaces: readonly string[]
  database: DatabaseApi | undefined
  /** The database API's circuit breaker, shared by every AppService; one with the default limits when omitted. */
  breaker?: CircuitBreaker
  /** The fencing token database writes carry (e.g. `LeaderElector.fencingToken`); unfenced when omitted. */
  fencingToken?: () => number | undefined
  recorder: EventRecorder
  maxConcurrentReconciles?: number
  logger?: Logger
  clock?: Clock
  /** Metrics hooks (e.g. from `Manager.controllerHooks`). */
  observer?: ControllerObserver
  queueMetrics?: QueueMetrics
  /** Default: the controller's (`defaultRetryPolicy()`). */
  retryPolicy?: RetryPolicy
  /** Told when an existing Deployment or Service was re-applied because it drifted (its `kind`). */
  onDrift?: ((kind: string) => void) | undefined
}

/** The `dependency` label of the database API's circuit breaker. */
export const DATABASE_DEPENDENCY = 'database-api'

/** Spec changes and deletion wake the controller; our own status and finalizer writes do not. */
const specOrDeletion: Predicate = {
  update: (a, b) =>
    generationChanged.update!(a, b) || (!a.metadata.deletionTimestamp && !!b.metadata.deletionTimestamp),
}

/** Builds the AppService controller and registers its informers with `factory` (start the factory after). */
export function appServiceController(o: AppServiceOperatorOptions): Controller<AppService> {
  const apps = o.factory.multiNamespaceInformer<AppService>({ type: APPSERVICES }, o.namespaces)
  const child = <T extends KubeObject>(type: ResourceType<T>) =>
    o.factory.multiNamespaceInformer({ type, labelSelector: CHILD_SELECTOR }, o.namespaces, {
      indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndexFunc },
    })
  const deployments = child(CORE_TYPES.deployments)
  const services = child(CORE_TYPES.services)
  const getAppService = (key: string) => apps.store.get(key)
  const appServices = (ns: string) => o.client.resource<AppService>(APPSERVICES, ns)

  return new Controller<AppService>({
    name: 'appservice',
    for: {
      source: apps,
      kind: KIND,
      group: GROUP,
      namespaced: true,
      predicates: [specOrDeletion as Predicate<AppService>],
    },
    owns: [{ source: deployments }, { source: services }],
    maxConcurrentReconciles: o.maxConcurrentReconciles ?? 1,
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.queueMetrics ? { queueMetrics: o.queueMetrics } : {}),
    ...(o.retryPolicy ? { retryPolicy: o.retryPolicy } : {}),
    onFailure: appServiceFailureReporter({
      getAppService,
      appServices,
      recorder: o.recorder,
      ...(o.clock ? { clock: o.clock } : {}),
    }),
    reconcile: appServiceReconciler({
      getAppService,
      getDeployment: (ns, name) => deployments.store.get(`${ns}/${name}`),
      getService: (ns, name) => services.store.get(`${ns}/${name}`),
      appServices,
      deployments: (ns) => o.client.resource(CORE_TYPES.deployments, ns),
      services: (ns) => o.client.resource(CORE_TYPES.services, ns),
      database: o.database,
      breaker:
        o.breaker ??
        new CircuitBreaker({ dependency: DATABASE_DEPENDENCY, ...(o.clock ? { clock: o.clock } : {}) }),
      ...(o.fencingToken ? { fencingToken: o.fencingToken } : {}),
      onDrift: o.onDrift,
      recorder: o.recorder,
      ...(o.clock ? { clock: o.clock } : {}),
    }),
  })
}

/** `edgeop run`'s flags: the operator flags and the database service's URL. */
export const APPSERVICE_FLAGS = {
  ...OPERATOR_FLAGS,
  'database-api': stringFlag(
    'Base URL (absolute http:// or https://) of the external database service (needed for AppServices with database.enabled).',
    { schema: httpUrl(), placeholder: 'url' },
  ),
}

/**
 * The AppService operator as `runOperator` / `operatorCommand` run it: leader-elected with
 * `--leader-elect`, watching `--namespace` (all when absent), events as
 * `platform.example.com/appservice-operator`; `check` verifies the CRD is served and the ClusterRole's
 * rules are granted.
 */
export const appServiceOperator: OperatorSpec<typeof APPSERVICE_FLAGS> = {
  name: 'edgeop',
  description: 'Run the AppService operator (the default command)',
  flags: APPSERVICE_FLAGS,
  validate: validateOperatorOptions,
  reportingController: `${APPSERVICES.group}/${OPERATOR_NAME}`,
  startFields: (o) => ({ namespaces: o.namespace.length ? o.namespace : 'all' }),
  check: {
    resources: [{ group: APPSERVICES.group, resource: APPSERVICES.resource }],
    rules: operatorRules(),
  },
  controllers: ({ options: o, client, manager, recorder, log }) => [
    appServiceController({
      onDrift: driftMetrics(manager.registry, 'appservice', ['Deployment', 'Service']),
      client,
      factory: manager.factory,
      namespaces: o.namespace,
      database: o.databaseApi ? databaseApi(o.databaseApi) : undefined,
      breaker: new CircuitBreaker({ dependency: DATABASE_DEPENDENCY, registry: manager.registry }),
      ...(manager.elector ? { fencingToken: () => manager.elector?.fencingToken() } : {}),
      recorder,
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      logger: log,
    }),
  ],
}
