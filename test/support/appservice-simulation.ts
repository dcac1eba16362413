/**
 * @module appservice-simulation — the AppService operator under the simulator: two leader-elected
 * replicas, a workload that creates, changes and deletes AppServices, and the operator's invariants.
 */
import { InformerFactory } from '../../src/cache/factory.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { sleep } from '../../src/core/clock.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { Condition, KubeObject } from '../../src/core/types.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import { LeaseLock } from '../../src/leader/lease-lock.ts'
import { runWhileLeading } from '../../src/leader/run-while-leading.ts'
import { EventRecorder } from '../../src/objects/events.ts'
import {
  APPSERVICES,
  type AppService,
  AppServiceSpec,
  CONDITION,
} from '../../src/operators/appservice/api.ts'
import {
  type AppServiceOperatorOptions,
  appServiceController,
} from '../../src/operators/appservice/operator.ts'
import { FINALIZER } from '../../src/operators/appservice/reconcile.ts'
import type {
  Invariant,
  ProcessContext,
  SimulatedCluster,
  SimulatedProcess,
  SimulationOptions,
  WriteInvariant,
} from '../../src/testing/index.ts'
import { deploymentRollouts } from '../../src/testing/index.ts'
import { leaseHolder } from './lease-holder.ts'

const NS = 'apps'
const NAMES = ['web', 'api', 'worker', 'cache']
const LEASE = 'appservice-operator'

/**
 * One replica of the operator: it reconciles only while it holds the Lease, with fresh caches each
 * time it leads (`elect: false`: always, a deliberately broken deployment for the tests that show the
 * write invariant failing).
 */
export function appServiceReplica(name: string, elect = true): SimulatedProcess {
  return {
    name,
    async run(ctx: ProcessContext) {
      const { client, clock, signal } = ctx
      const reconcile = (leading: AbortSignal) =>
        runAppServiceController(ctx, leading, {
          fencingToken: elect ? () => elector.fencingToken() : undefined,
        })
      const lock = LeaseLock.fromClient(client, { namespace: 'ops', name: LEASE, identity: name })
      const elector = new LeaderElector({ lock, clock, logger: noopLogger })
      if (!elect) return reconcile(signal)
      await runWhileLeading(elector, reconcile, signal)
    },
  }
}

/**
 * The AppService controller of one incarnation, with fresh informers, until `leading` aborts; `extra`
 * adds the shard and the fencing token.
 */
export async function runAppServiceController(
  { client, clock, name }: ProcessContext,
  leading: AbortSignal,
  extra: Pick<AppServiceOperatorOptions, 'shard' | 'fencingToken'>,
): Promise<void> {
  const factory = new InformerFactory(client, { clock, logger: noopLogger })
  const recorder = new EventRecorder(client, {
    controller: 'sim/appservice',
    instance: name,
    clock,
    logger: noopLogger,
  })
  const controller = appServiceController({
    client,
    factory,
    namespaces: [],
    database: undefined,
    recorder,
    clock,
    logger: noopLogger,
    ...extra,
  })
  factory.start(leading)
  await controller.run(leading)
}

/**
 * A user for `activeMs`: every few virtual seconds one of create, change replicas, change image or
 * delete, on a few names (so deletes race reconciles and names come back with new UIDs).
 */
export function appServiceWorkload(activeMs: number): SimulationOptions['workload'] {
  return async ({ client, clock, random, trace }) => {
    const apps = client.resource(APPSERVICES, NS)
    const end = clock.now() + activeMs
    while (clock.now() < end) {
      await sleep(500 + random.int(8_000), clock)
      const name = random.pick(NAMES)
      const op = random.int(4)
      try {
        if (op === 0) {
          await apps.create({
            apiVersion: `${APPSERVICES.group}/${APPSERVICES.version}`,
            kind: 'AppService',
            metadata: { name, namespace: NS },
            spec: { image: `nginx:1.${random.int(5)}`, replicas: 1 + random.int(3), port: 8080 },
          } as AppService)
          trace(`create ${name}`)
        } else if (op === 1) {
          await apps.patch(name, { spec: { replicas: 1 + random.int(5) } })
          trace(`scale ${name}`)
        } else if (op === 2) {
          await apps.patch(name, { spec: { image: `nginx:1.${random.int(5)}` } })
          trace(`image ${name}`)
        } else {
          await apps.delete(name)
          trace(`delete ${name}`)
        }
      } catch {
        // The user's request failed (the object exists, is gone or is being deleted): next one.
      }
    }
  }
}

const children = (c: SimulatedCluster): KubeObject[] => [
  ...c.list(CORE_TYPES.deployments),
  ...c.list(CORE_TYPES.services),
]
const controllerUid = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid

/** Checked after every step. */
export const APPSERVICE_SAFETY: Invariant[] = [
  {
    // Phase 3 before phase 4: a child exists only for an AppService that carries the finalizer.
    name: 'children only under the finalizer',
    check(c) {
      const apps = new Map(c.list<AppService>(APPSERVICES).map((a) => [a.metadata.uid, a]))
      for (const child of children(c)) {
        const owner = apps.get(controllerUid(child))
        if (owner && !owner.metadata.finalizers?.includes(FINALIZER))
          return `${child.kind ?? 'child'} ${child.metadata.name} exists but its AppService has no finalizer`
      }
      return undefined
    },
  },
  {
    name: 'status never claims a generation not yet written',
    check(c) {
      for (const a of c.list<AppService>(APPSERVICES)) {
        const observed = (a.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0
        if (observed > (a.metadata.generation ?? 0))
          return `${a.metadata.name}: observedGeneration ${observed} > generation ${a.metadata.generation}`
      }
      return undefined
    },
  },
]

/** Checked at every write: leader election keeps a single writer (no split brain after a partition or a crash). */
export const APPSERVICE_WRITE_SAFETY: WriteInvariant[] = [
  {
    name: 'only the Lease holder writes AppServices and their children',
    check(w, c) {
      if (!w.process.startsWith('operator-') || !WRITTEN_BY_LEADER.has(w.target.resource)) return undefined
      const holder = leaseHolder(c, 'ops', LEASE)
      return holder === w.process
        ? undefined
        : `${w.process} wrote ${w.target.resource}/${w.target.name} while the Lease names ${holder || 'no one'}`
    },
  },
]
const WRITTEN_BY_LEADER = new Set(['appservices', 'deployments', 'services'])

/** Checked at the end, after the faults stopped for the settle time. */
export const APPSERVICE_LIVENESS: Invariant[] = [
  {
    name: 'every AppService converged: Deployment and Service as specified, Ready at its generation',
    check(c) {
      const deps = new Map(c.list(CORE_TYPES.deployments).map((d) => [d.metadata.name, d]))
      const svcs = new Set(c.list(CORE_TYPES.services).map((s) => s.metadata.name))
      for (const a of c.list<AppService>(APPSERVICES)) {
        if (a.metadata.deletionTimestamp) return `${a.metadata.name} is still being deleted`
        const spec = AppServiceSpec.parse(a.spec)
        const d = deps.get(a.metadata.name) as
          | (KubeObject & {
              spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } }
            })
          | undefined
        if (!d || controllerUid(d) !== a.metadata.uid)
          return `${a.metadata.name} has no Deployment of its own`
        if (d.spec?.replicas !== spec.replicas)
          return `${a.metadata.name}: Deployment replicas ${d.spec?.replicas} ≠ ${spec.replicas}`
        if (d.spec?.template?.spec?.containers?.[0]?.image !== spec.image)
          return `${a.metadata.name}: Deployment image differs`
        if (!svcs.has(a.metadata.name)) return `${a.metadata.name} has no Service`
        const ready = (a.status as { conditions?: Condition[] } | undefined)?.conditions?.find(
          (x) => x.type === CONDITION.ready,
        )
        if (ready?.status !== 'True' || ready.observedGeneration !== a.metadata.generation)
          return `${a.metadata.name}: Ready is ${ready?.status ?? 'absent'} at generation ${ready?.observedGeneration} of ${a.metadata.generation}`
      }
      return undefined
    },
  },
  {
    name: 'no child outlives its AppService',
    check(c) {
      const uids = new Set(c.list(APPSERVICES).map((a) => a.metadata.uid))
      for (const child of children(c))
        if (!uids.has(controllerUid(child)))
          return `${child.kind ?? 'child'} ${child.metadata.name} has no owner`
      return undefined
    },
  },
]

/** The whole AppService simulation for one seed: `minutes` of virtual time, faults until the last 2 minutes. */
export function appServiceSimulation(seed: number, minutes = 10): SimulationOptions {
  const durationMs = minutes * 60_000
  const settleMs = 120_000
  return {
    seed,
    durationMs,
    settleMs,
    resources: [{ type: APPSERVICES, spec: AppServiceSpec }],
    setup: (c) => void deploymentRollouts(c.store, c.clock),
    processes: [appServiceReplica('operator-a'), appServiceReplica('operator-b')],
    workload: appServiceWorkload(durationMs - settleMs),
    safety: APPSERVICE_SAFETY,
    writeSafety: APPSERVICE_WRITE_SAFETY,
    liveness: APPSERVICE_LIVENESS,
  }
}
