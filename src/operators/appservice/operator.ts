/**
 * @module operator — the AppService controller: informers, predicates, reconciler.
 */
import {
  CONTROLLER_UID_INDEX,
  controllerUidIndexFunc,
  type InformerFactory,
  type SharedInformer,
} from '../../cache/index.ts'
import { CORE_TYPES, type KubeClient } from '../../client/index.ts'
import {
  Controller,
  type ControllerObserver,
  generationChanged,
  mergeSources,
  type Predicate,
} from '../../controller/index.ts'
import type { Clock, KubeObject, Logger } from '../../core/index.ts'
import type { EventRecorder } from '../../objects/index.ts'
import type { QueueMetrics } from '../../queue/index.ts'
import { APPSERVICES, type AppService, GROUP, KIND } from './api.ts'
import type { DatabaseApi } from './database-api.ts'
import { CHILD_SELECTOR } from './desired.ts'
import { appServiceReconciler } from './reconcile.ts'

/** Options of {@link appServiceController}. */
export interface AppServiceOperatorOptions {
  client: KubeClient
  factory: InformerFactory
  /** Namespaces to watch; empty = all. */
  namespaces: readonly string[]
  database: DatabaseApi | undefined
  recorder: EventRecorder
  maxConcurrentReconciles?: number
  logger?: Logger
  clock?: Clock
  /** Metrics hooks (e.g. from `Manager.controllerHooks`). */
  observer?: ControllerObserver
  queueMetrics?: QueueMetrics
}

/** Spec changes and deletion wake the controller; our own status and finalizer writes do not. */
const specOrDeletion: Predicate = {
  update: (a, b) =>
    generationChanged.update!(a, b) || (!a.metadata.deletionTimestamp && !!b.metadata.deletionTimestamp),
}

/** Builds the AppService controller and registers its informers with `factory` (start the factory after). */
export function appServiceController(o: AppServiceOperatorOptions): Controller<AppService> {
  const scopes: (string | undefined)[] = o.namespaces.length === 0 ? [undefined] : [...o.namespaces]
  const byNamespace =
    <T extends KubeObject>(informers: SharedInformer<T>[]) =>
    (ns: string) =>
      informers.length === 1 && scopes[0] === undefined ? informers[0]! : informers[scopes.indexOf(ns)]
  const apps = scopes.map((namespace) =>
    o.factory.informer<AppService>({ type: APPSERVICES, ...(namespace ? { namespace } : {}) }),
  )
  const child = (type: typeof CORE_TYPES.deployments | typeof CORE_TYPES.services) =>
    scopes.map((namespace) =>
      o.factory.informer(
        { type, labelSelector: CHILD_SELECTOR, ...(namespace ? { namespace } : {}) },
        { indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndexFunc } },
      ),
    )
  const deployments = child(CORE_TYPES.deployments)
  const services = child(CORE_TYPES.services)
  const appIn = byNamespace(apps)
  const depIn = byNamespace(deployments)
  const svcIn = byNamespace(services)

  return new Controller<AppService>({
    name: 'appservice',
    for: {
      source: mergeSources(apps),
      kind: KIND,
      group: GROUP,
      namespaced: true,
      predicates: [specOrDeletion as Predicate<AppService>],
    },
    owns: [{ source: mergeSources(deployments) }, { source: mergeSources(services) }],
    maxConcurrentReconciles: o.maxConcurrentReconciles ?? 1,
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.queueMetrics ? { queueMetrics: o.queueMetrics } : {}),
    reconcile: appServiceReconciler({
      getAppService: (key) => appIn(key.slice(0, key.indexOf('/')))?.store.get(key),
      getDeployment: (ns, name) => depIn(ns)?.store.get(`${ns}/${name}`),
      getService: (ns, name) => svcIn(ns)?.store.get(`${ns}/${name}`),
      appServices: (ns) => o.client.resource<AppService>(APPSERVICES, ns),
      deployments: (ns) => o.client.resource(CORE_TYPES.deployments, ns),
      services: (ns) => o.client.resource(CORE_TYPES.services, ns),
      database: o.database,
      recorder: o.recorder,
      ...(o.clock ? { clock: o.clock } : {}),
    }),
  })
}
