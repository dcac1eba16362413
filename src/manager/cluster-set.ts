/**
 * @module cluster-set — the member clusters one process reconciles besides its home cluster, engaged
 * and disengaged at runtime (sigs.k8s.io/multicluster-runtime's cluster provider and `Aware`).
 *
 * Each member has its own client and informer factory; what works on clusters registers with
 * {@link ClusterSet.onEngage} and is handed each member with a signal that aborts when the member
 * leaves (the AppService operator adds one controller per member, with its own queue and workers,
 * through `Manager.add(controller, signal)`). A member that is down or slow only fails its own
 * caches: nothing waits for them, and {@link ClusterSet.status} reports them not synced.
 */
import { InformerFactory } from '../cache/factory.ts'
import type { KubeClient } from '../client/kube-client.ts'
import type { Clock } from '../core/clock.ts'
import { errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { informersCheck } from '../health/health-checks.ts'
import { defaultLogger } from '../logging/logger.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'

/** One engaged member cluster. */
export interface Cluster {
  /** Its name in the cluster list (a DNS-1123 label): the `cluster` of requests, logs and metrics. */
  readonly name: string
  /** Its client. */
  readonly client: KubeClient
  /** Its informers, started by the set: create them in the {@link ClusterSet.onEngage} callback. */
  readonly factory: InformerFactory
}

/** Options of {@link ClusterSet}. */
export interface ClusterSetOptions {
  /** The client of cluster `name` from its reference in the list (e.g. `kubeconfig:context`). */
  connect(name: string, ref: string): Promise<KubeClient> | KubeClient
  /** Default {@link defaultLogger}; each member's informers log with `cluster` bound. */
  logger?: Logger
  /** The informers' clock. Default: real time. */
  clock?: Clock
}

/** What {@link clusterChanges} says to do: members to disengage, then members to engage. */
export interface ClusterChanges {
  /** Members to disengage: gone from the list, or with a changed reference. */
  stop: string[]
  /** Members to engage: new, changed, or not engaged (their client could not be built). */
  start: string[]
}

/**
 * Pure: from the engaged members (name → reference) to `wanted`. A member whose reference changed is
 * stopped and started again; one not engaged (its connect failed) is started again.
 */
export function clusterChanges(
  engaged: ReadonlyMap<string, string>,
  wanted: Readonly<Record<string, string>>,
): ClusterChanges {
  const stop = [...engaged].filter(([n, ref]) => wanted[n] !== ref).map(([n]) => n)
  return { stop, start: Object.keys(wanted).filter((n) => engaged.get(n) !== wanted[n]) }
}

interface Member {
  cluster: Cluster
  ref: string
  life: AbortController
}

/**
 * The member clusters, engaged from a list that may change at runtime ({@link update}).
 *
 * Guarantees: a member's informers start when it is engaged and stop, its client closed, when it is
 * disengaged; every {@link onEngage} callback sees every member (those engaged before it too), with a
 * signal that aborts when that member leaves; a member whose client cannot be built is logged and
 * tried again at the next {@link update}. Nothing here waits for a member to sync.
 */
export class ClusterSet {
  readonly #o: ClusterSetOptions
  readonly #members = new Map<string, Member>()
  readonly #aware: ((cluster: Cluster, signal: AbortSignal) => void)[] = []

  /** Engages nothing until {@link update}. */
  constructor(options: ClusterSetOptions) {
    this.#o = options
  }

  /** Calls `fn` for every member engaged now and from now on; `signal` aborts when it leaves. */
  onEngage(fn: (cluster: Cluster, signal: AbortSignal) => void): void {
    this.#aware.push(fn)
    for (const m of this.#members.values()) fn(m.cluster, m.life.signal)
  }

  /** Makes the members those of `wanted` (name → reference; `{}` disengages all): see {@link clusterChanges}. */
  async update(wanted: Readonly<Record<string, string>>): Promise<void> {
    const members = this.#members
    const { stop, start } = clusterChanges(new Map([...members].map(([n, m]) => [n, m.ref])), wanted)
    for (const name of stop) {
      const m = members.get(name)!
      members.delete(name)
      m.life.abort()
      await m.cluster.factory.stopped()
      await m.cluster.client.close()
    }
    for (const name of start) {
      const log = (this.#o.logger ?? defaultLogger()).child({ cluster: name })
      try {
        const client = await this.#o.connect(name, wanted[name]!)
        const cluster = {
          name,
          client,
          factory: new InformerFactory(client, { logger: log, clock: this.#o.clock }),
        }
        const m = { cluster, ref: wanted[name]!, life: new AbortController() }
        members.set(name, m)
        for (const fn of this.#aware) fn(cluster, m.life.signal)
        cluster.factory.start(m.life.signal)
        log.info('cluster engaged')
      } catch (err) {
        log.error('cannot engage cluster', { error: errorMessage(err) })
      }
    }
  }

  /** Per engaged member: undefined when its caches are synced and watching, else why not. */
  status(): Map<string, string | undefined> {
    const out = new Map<string, string | undefined>()
    for (const [name, m] of this.#members)
      try {
        out.set(name, void informersCheck(() => m.cluster.factory.informers)())
      } catch (err) {
        out.set(name, errorMessage(err))
      }
    return out
  }

  /**
   * A readiness check that passes whatever the members' state (a member down must not take the
   * process out of service for the others) and names each member not synced, with why.
   */
  check = (): string | undefined => {
    const bad = [...this.status()].filter(([, why]) => why)
    return bad.length ? `not synced: ${bad.map(([n, why]) => `${n} (${why})`).join('; ')}` : undefined
  }

  /** `edgeop_cluster_synced{cluster}` (0/1) in `registry`, read at scrape time. */
  metrics(registry: MetricsRegistry): void {
    const g = registry.gauge({
      name: 'edgeop_cluster_synced',
      help: 'Member cluster caches synced and watching (1) or not (0).',
      labelNames: ['cluster'],
    })
    registry.addCollector(() => {
      g.reset()
      for (const [cluster, why] of this.status()) g.set({ cluster }, why ? 0 : 1)
    })
  }
}
