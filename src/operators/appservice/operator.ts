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
  type Reconciler,
  type RetryPolicy,
} from '../../controller/index.ts'
import type { Clock, KubeObject, Logger } from '../../core/index.ts'
import { driftMetrics } from '../../metrics/index.ts'
import type { EventRecorder } from '../../objects/index.ts'
import {
  httpUrl,
  nonEmpty,
  OPERATOR_FLAGS,
  type OperatorSpec,
  SHARD_FLAGS,
  stringFlag,
  validateOperatorOptions,
  WEBHOOK_FLAGS,
} from '../../operator/index.ts'
import type { QueueMetrics } from '../../queue/index.ts'
import { CircuitBreaker } from '../../resilience/index.ts'
import type { Shard } from '../../sharding/index.ts'
import { APPSERVICES, type AppService, GROUP, KIND } from './api.ts'
import { type DatabaseApi, databaseApi } from './database-api.ts'
import { OPERATOR_NAME } from './deployment-names.ts'
import { CHILD_SELECTOR } from './desired.ts'
import { appServiceFailureReporter, appServiceParkedRecord } from './failure-reporter.ts'
import { operatorRules } from './manifests.ts'
import { appServiceReconciler } from './reconcile.ts'
import { appServiceWebhooks } from './webhooks.ts'

/** Options of {@link appServiceController}. */
export interface AppServiceOperatorOptions {
  client: KubeClient
  factory: InformerFactory
  /** Namespaces to watch; empty = all. */
  namespaces: readonly string[]
  database: DatabaseApi | undefined
  /** The database API's circuit breaker, shared by every AppService; one with the default limits when omitted. */
  breaker?: CircuitBreaker
  /** The fencing token database writes about an AppService carry (e.g. `LeaderElector.fencingToken`); unfenced when omitted. */
  fencingToken?: (app: AppService) => number | undefined
  /** Sharded: this replica's member (e.g. `Manager.shard`); its informers then cache only its own AppServices and their children. */
  shard?: Shard | undefined
  recorder: EventRecorder
  maxConcurrentReconciles?: number
  logger?: Logger
  clock?: Clock
  /** Metrics hooks (e.g. from `Manager.controllerHooks`). */
  observer?: ControllerObserver
  queueMetrics?: QueueMetrics
  /** Default: the controller's (`defaultRetryPolicy()`). */
  retryPolicy?: RetryPolicy
  /**
   * The member cluster `client` and `factory` are of (see `ClusterSet`): the controller is named
   * `appservice/<cluster>`, its requests and logs carry the cluster, database keys include it.
   */
  cluster?: string
  /** Told when an existing Deployment or Service was re-applied because it drifted (its `kind`). */
  onDrift?: ((kind: string) => void) | undefined
}

/** The `dependency` label of the database API's circuit breaker. */
export const DATABASE_DEPENDENCY = 'database-api'

/** Spec changes and deletion wake the controller; our own status and finalizer writes do not. */
const specOrDeletion: Predicate<AppService> = {
  update: (a, b) =>
    generationChanged.update!(a, b) || (!a.metadata.deletionTimestamp && !!b.metadata.deletionTimestamp),
}

/** Builds the AppService controller and registers its informers with `factory` (start the factory after). */
export function appServiceController(o: AppServiceOperatorOptions): Controller<AppService> {
  const { shard } = o
  const mine = shard ? { labelSelector: shard.selector } : {}
  const apps = o.factory.multiNamespaceInformer({ type: APPSERVICES, ...mine }, o.namespaces)
  shard?.own(APPSERVICES, apps)
  const child = <T extends KubeObject>(type: ResourceType<T>) =>
    o.factory.multiNamespaceInformer(
      { type, labelSelector: CHILD_SELECTOR + (shard ? `,${shard.selector}` : '') },
      o.namespaces,
      {
        indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndexFunc },
        store: 'eager',
      },
    )
  // The AppServices take the factory's default for custom resources, the compact store (DEFAULT_JSON_STORE: it
  // measured smaller); each reconcile decodes one again, a JSON object of about 1 KB. The children are named
  // eager, since the factory's default for JSON is compact too: they are read back twice at every reconcile.
  // JSON into eager stores, not PROTOBUF_DEPLOYMENTS/PROTOBUF_SERVICES into compact ones: measured 2026-12-02
  // (`npm run bench:operator -- --count 1000 --starts 5`, three alternating pairs on a loaded 2-core machine),
  // protobuf with the compact store made this operator no smaller and no cheaper: RSS with 1,000 AppServices
  // 95.4/95.1/87.9 → 94.3/96.8/95.9 MiB; operator CPU over the 1,000 reconciles 9.4 → 11.0 s (third pair; 9.6 s
  // in a later JSON run). After full GCs in-process, its 2,000 children took 2,507 → 2,078 heap bytes each
  // (docs/library.md): 0.9 MB in all. Wall times drifted with the machine's load. A likely cause of the CPU, not
  // profiled: each reconcile reads its Deployment and Service back from the store, which a compact store decodes
  // again. The two tables would cost the artifact 4,185 gzip bytes more, 988 over its 120 KiB budget.
  const deployments = child(CORE_TYPES.deployments)
  const services = child(CORE_TYPES.services)
  const getAppService = (key: string) => apps.store.get(key)
  const appServices = (ns: string) => o.client.resource(APPSERVICES, ns)

  return new Controller<AppService>({
    name: o.cluster ? `appservice/${o.cluster}` : 'appservice',
    cluster: o.cluster || undefined,
    for: {
      source: apps,
      kind: KIND,
      group: GROUP,
      namespaced: true,
      predicates: [specOrDeletion],
    },
    owns: [{ source: deployments }, { source: services }],
    maxConcurrentReconciles: o.maxConcurrentReconciles ?? 1,
    logger: o.logger,
    clock: o.clock,
    observer: o.observer,
    queueMetrics: o.queueMetrics,
    retryPolicy: o.retryPolicy,
    // A parked AppService records it in its Degraded condition: read back, it survives restarts and leader changes.
    parkedFrom: appServiceParkedRecord,
    onFailure: appServiceFailureReporter({
      getAppService,
      appServices,
      recorder: o.recorder,
      clock: o.clock,
    }),
    reconcile: (shard ? (r: Reconciler) => shard.guard(r) : (r: Reconciler) => r)(
      appServiceReconciler({
        getAppService,
        getDeployment: (ns, name) => deployments.store.get(`${ns}/${name}`),
        getService: (ns, name) => services.store.get(`${ns}/${name}`),
        appServices,
        deployments: (ns) => o.client.resource(CORE_TYPES.deployments, ns),
        services: (ns) => o.client.resource(CORE_TYPES.services, ns),
        database: o.database,
        breaker: o.breaker ?? new CircuitBreaker({ dependency: DATABASE_DEPENDENCY, clock: o.clock }),
        fencingToken: o.fencingToken,
        ...(shard ? { shardLabel: shard.label } : {}),
        recorder: o.recorder,
        clock: o.clock,
        cluster: o.cluster,
        onDrift: o.onDrift,
      }),
    ),
  })
}

/** `edgeop run`'s flags: the operator flags, `--shard` (the controller is sharded), the webhook flags and the database service's URL. */
export const APPSERVICE_FLAGS = {
  ...OPERATOR_FLAGS,
  ...SHARD_FLAGS,
  ...WEBHOOK_FLAGS,
  'database-api': stringFlag(
    'Base URL (absolute http:// or https://) of the external database service (needed for AppServices with database.enabled).',
    { schema: httpUrl(), placeholder: 'url' },
  ),
  'clusters-file': stringFlag(
    'Member clusters to reconcile too: a file of name=kubeconfig[:context] lines, re-read every 10 s.',
    { schema: nonEmpty(), placeholder: 'path' },
  ),
}

/**
 * The AppService operator as `runOperator` / `operatorCommand` run it: leader-elected with
 * `--leader-elect` (in the home cluster) or sharded with `--shard`, watching `--namespace` (all when
 * absent) in the home cluster and in each member cluster of `--clusters-file` (one controller per
 * member), admission webhooks on `--webhook-bind-address` (every replica; see webhooks.ts), events as
 * `platform.example.com/appservice-operator`; `check` verifies the CRD is served and the ClusterRole's
 * rules are granted.
 */
export const appServiceOperator: OperatorSpec<typeof APPSERVICE_FLAGS> = {
  name: 'edgeop',
  description: 'Run the AppService operator (the default command)',
  flags: APPSERVICE_FLAGS,
  // Sharding covers the home cluster only: every replica would otherwise reconcile every member.
  validate: (o) =>
    validateOperatorOptions(o) ??
    (o.shard && o.clustersFile ? '--clusters-file: not supported with --shard yet' : undefined),
  reportingController: `${APPSERVICES.group}/${OPERATOR_NAME}`,
  startFields: (o) => ({ namespaces: o.namespace.length ? o.namespace : 'all' }),
  check: {
    resources: [{ group: APPSERVICES.group, resource: APPSERVICES.resource }],
    rules: operatorRules(),
  },
  webhooks: appServiceWebhooks(),
  controllers: ({ options: o, client, manager, recorder, log, clusters }) => {
    const shared = {
      onDrift: driftMetrics(manager.registry, 'appservice', ['Deployment', 'Service']),
      namespaces: o.namespace,
      database: o.databaseApi ? databaseApi(o.databaseApi) : undefined,
      breaker: new CircuitBreaker({ dependency: DATABASE_DEPENDENCY, registry: manager.registry }),
      // Sharded, the object's epoch while the membership Lease is held.
      ...(manager.elector
        ? {
            fencingToken: (app: AppService) => {
              const t = manager.elector?.fencingToken()
              return t === undefined || !manager.shard ? t : manager.shard.token(app)
            },
          }
        : {}),
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      logger: log,
    }
    clusters?.onEngage((c, signal) =>
      manager.add(
        appServiceController({
          ...shared,
          client: c.client,
          factory: c.factory,
          recorder: recorder.forClient(c.client),
          cluster: c.name,
        }),
        signal,
      ),
    )
    return [
      appServiceController({ ...shared, client, factory: manager.factory, recorder, shard: manager.shard }),
    ]
  },
}
