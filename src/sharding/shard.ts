/**
 * @module shard — this replica's share of a sharded controller's objects (timebertt's
 * kubernetes-controller-sharding, with the sharder's work done by the members themselves).
 *
 * - **Membership**: each replica holds its own Lease, named `<ring>-<id>` and labelled
 *   `shard.edgeop.io/<ring>: <id>` (the manager's elector renews it; a replica that cannot renew
 *   stops its controllers within the renew deadline and exits). The live members are those Leases
 *   judged as {@link Membership} does.
 * - **Assignment** is a label on each object, `shard.edgeop.io/<ring>: <owner id>`, with an epoch
 *   annotation `epoch.shard.edgeop.io/<ring>` raised by every assignment. The owner is
 *   {@link ownerOf} the ring ({@link Membership}: the live members seen renewing). Each replica's informers select `label=<id>`, so a replica
 *   watches and caches only its own objects: memory falls with the number of members. Children
 *   carry the owner's label too, so their informers select the same way.
 * - **Every member is an assigner** (no extra component). Each {@link Shard.run} tick, every
 *   {@link DEFAULT_SHARD_PERIOD_MS}, it lists (metadata only, one page: in steady state it is
 *   empty, after a death it holds that member's share) the objects labelled with no live
 *   member — unassigned, or owned by a member whose Lease expired or was released — *then* the
 *   membership Leases, and labels those the ring gives to itself (a compare-and-swap on the
 *   resourceVersion). Listing objects first makes "no live member" safe: a member labels objects
 *   only after its Lease exists, so any label in that list names a Lease the second list shows.
 *   A dead member's objects are thus taken over within its Lease duration plus one period.
 * - **Drain handshake**: when the ring gives one of its own objects to another member, the owner
 *   stops starting reconciles of it ({@link Shard.guard} requeues them), waits for the one in
 *   flight, and only then relabels it to the new owner with the next epoch. The old owner is the
 *   one that drains and acknowledges, in one write: the new owner's informer sees the object only
 *   after that, so two members never reconcile one object at once.
 * - **Fencing**: {@link Shard.token} is the object's epoch while this replica owns it. Epochs only
 *   grow per object, so an external service that refuses a token lower than it has seen for that
 *   object refuses a deposed owner (one paused past its Lease) once the new owner has written.
 *
 * Metrics: `edgeop_shard_objects` (objects this replica owns) and `edgeop_shard_handovers_total`
 * (objects it drained to another member or took over from a dead one). No per-object or
 * per-member labels: each replica reports its own share, so series stay bounded.
 */
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../client/resource.ts'
import type { Reconciler } from '../controller/reconciler.ts'
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import type { KubeObject, Lease } from '../core/types.ts'
import type { Counter, MetricsRegistry } from '../metrics/metrics-registry.ts'
import { Membership, ownerOf } from './ring.ts'

/** Assignment label prefix: the ring's name follows. */
export const SHARD_LABEL_PREFIX = 'shard.edgeop.io/'
/** Epoch annotation prefix: the ring's name follows. */
export const EPOCH_ANNOTATION_PREFIX = 'epoch.shard.edgeop.io/'
/** Interval between assignment passes: 2 s, client-go's leader election retry period (how soon a change of members is acted on). */
export const DEFAULT_SHARD_PERIOD_MS = 2_000
/**
 * Relabels (takeovers and drains) a pass has in flight at once: 8. The Lease renewal shares the
 * client's rate limiter, so it waits behind at most these (1.6 s at client-go's default 5 qps, inside
 * the 10 s renew deadline). Unbounded, a pass over 3,000 unassigned objects queued 3,000 patches
 * ahead of the renewal and the member lost its Lease and exited (`npm run bench:sharding`).
 */
export const MOVES_IN_FLIGHT = 8

/** Options of {@link Shard}. */
export interface ShardOptions {
  /** Lists Leases and the sharded kind, and patches its objects' labels. */
  client: KubeClient
  /** The ring's name (a DNS-1123 label of at most 63 characters): prefix of the Lease names, suffix of the label. */
  ring: string
  /** Namespace of the membership Leases. */
  namespace: string
  /** This member's id: a label value, unique in the ring. */
  id: string
  /** Default {@link DEFAULT_SHARD_PERIOD_MS}. */
  periodMs?: number | undefined
  /** Time of the period, the reconcile log and Lease expiry (monotonic). Default: real time. */
  clock?: Clock
  /** Pass failures (warn), assignments and reconcile intervals (debug). Default: none. */
  logger?: Logger
  /** Where the shard metrics go; none when omitted. */
  registry?: MetricsRegistry
}

/** The sharded kind's informer as the shard reads it: its store and namespaces (empty: all). */
export interface ShardSource {
  /** The informer's cache: this member's objects. */
  store: { get(key: string): KubeObject | undefined; list(): KubeObject[]; readonly size: number }
  /** The namespaces it watches; empty: all. */
  namespaces: readonly string[]
}

const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/` : '') + o.metadata.name

/**
 * One member of a ring: see the module doc. Register the sharded kind with {@link own}, wrap its
 * reconciler in {@link guard}, select its informers with {@link selector}, and {@link run} it while
 * the membership Lease is held (the manager does).
 */
export class Shard {
  /** This member's id. */
  readonly id: string
  /** The assignment label's key. */
  readonly label: string
  /** `<label>=<id>`: the label selector of this member's objects (and their children). */
  readonly selector: string
  readonly #o: ShardOptions
  readonly #epoch: string
  readonly #members: Membership
  readonly #period: number
  readonly #log: Logger
  readonly #clock: Clock
  /** Key → the epoch it was drained with (Infinity until written). */
  readonly #draining = new Map<string, number>()
  readonly #busy = new Map<string, Promise<unknown>>()
  #live: string[] = []
  #src: [ResourceType, ShardSource] | undefined
  #handovers: Counter | undefined

  /** Builds the member; reads and writes nothing until {@link run}. */
  constructor(o: ShardOptions) {
    this.#o = o
    this.id = o.id
    this.label = SHARD_LABEL_PREFIX + o.ring
    this.#epoch = EPOCH_ANNOTATION_PREFIX + o.ring
    this.selector = `${this.label}=${o.id}`
    this.#members = new Membership(this.label, o.id)
    this.#period = o.periodMs ?? DEFAULT_SHARD_PERIOD_MS
    this.#log = o.logger ?? noopLogger
    this.#clock = o.clock ?? realClock
    const r = o.registry
    if (r) {
      const owned = r.gauge({ name: 'edgeop_shard_objects', help: 'Objects this replica owns.' })
      r.addCollector(() => owned.set({}, this.#src?.[1].store.size ?? 0))
      this.#handovers = r.counter({
        name: 'edgeop_shard_handovers_total',
        help: 'Objects this replica handed over or took over.',
      })
    }
  }

  /** Registers the sharded kind: its type, and its informer, which must select {@link selector}. One kind per ring. */
  own(type: ResourceType, source: ShardSource): void {
    this.#src = [type, source]
  }

  /**
   * `reconcile` for this member's objects only: one not in the sharded informer's store is skipped
   * (sharded, an object leaving the cache may have moved to another member: clean up through
   * finalizers, never on absence), one being drained is requeued; the reconcile in flight per
   * object is tracked for the drain, and logged (`reconciled`, debug, with its `from`/`to` times).
   */
  guard(reconcile: Reconciler): Reconciler {
    return async (req, ctx) => {
      const k = keyOf({ metadata: req })
      // Not cached: moved away (or deleted): not this member's to act on.
      if (!this.#src?.[1].store.get(k)) return
      if (this.#draining.has(k)) return { requeueAfterMs: this.#period }
      const from = this.#clock.now()
      const p = reconcile(req, ctx)
      this.#busy.set(k, p)
      try {
        return await p
      } finally {
        this.#busy.delete(k)
        ctx.log.debug('reconciled', { from, to: this.#clock.now() })
      }
    }
  }

  /** The fencing token of `obj`: its epoch while this replica owns it and is not draining it, else undefined. */
  token(obj: KubeObject): number | undefined {
    return obj.metadata.labels?.[this.label] === this.id && !this.#draining.has(keyOf(obj))
      ? this.#epochOf(obj)
      : undefined
  }

  /** Assignment passes until `signal` aborts; a failed pass is logged and retried after the period. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#pass(signal).catch((err) => {
        if (!signal.aborted) this.#log.warn('shard pass failed', { error: errorMessage(err) })
      })
      await sleep(this.#period, this.#clock, signal).catch(() => {})
    }
  }

  async #pass(signal: AbortSignal): Promise<void> {
    const [type, src] = this.#src ?? []
    if (!type || !src) return
    const { client } = this.#o
    const label = this.label
    // 1. Objects no live member owned at the last pass, listed before the Leases (see the module doc).
    const orphans: KubeObject[] = []
    if (this.#live.length)
      for (const ns of src.namespaces.length ? src.namespaces : [undefined])
        orphans.push(
          ...((
            await client
              .resource(type, ns)
              .listMetadata({ labelSelector: `${label} notin (${this.#live})`, signal })
          ).items ?? []), // null when empty
        )
    // 2. The members.
    const leases = await client
      .resource<Lease>(CORE_TYPES.leases, this.#o.namespace)
      .list({ labelSelector: label, signal })
    const [live, ring] = this.#members.observe(leases.items, this.#clock.monotonic())
    this.#live = live
    for (const [k, e] of this.#draining) {
      const c = src.store.get(k)
      if (!c || this.#epochOf(c) > e) this.#draining.delete(k)
    }
    const moves: (() => Promise<unknown>)[] = []
    // 3. Take what the ring gives this member from no live member.
    for (const o of orphans) {
      const from = o.metadata.labels?.[label]
      if (!live.includes(from!) && ownerOf(keyOf(o), ring) === this.id)
        moves.push(() => this.#assign(type, o, this.id, !!from))
    }
    // 4. Drain what the ring gives another member.
    for (const o of src.store.list()) {
      const k = keyOf(o)
      const to = ownerOf(k, ring)
      if (!to || to === this.id || this.#draining.has(k)) continue
      this.#draining.set(k, Infinity)
      moves.push(async () => {
        await this.#busy.get(k)?.catch(() => {})
        this.#draining.set(k, await this.#assign(type, o, to, true))
      })
    }
    // At most MOVES_IN_FLIGHT at once. A failed move (the object changed since read: 409) is tried
    // again at the next pass; a drain that failed is no longer one.
    await Promise.all(
      Array.from({ length: MOVES_IN_FLIGHT }, async () => {
        for (let m = moves.shift(); m; m = moves.shift()) await m().catch(() => {})
      }),
    )
    for (const [k, e] of this.#draining) if (e === Infinity) this.#draining.delete(k)
  }

  #epochOf(o: KubeObject): number {
    return Number(o.metadata.annotations?.[this.#epoch] ?? 0)
  }

  /** Labels `o` for member `to` with the next epoch, if it is unchanged since read; resolves with that epoch. A `handover` is counted. */
  async #assign(type: ResourceType, o: KubeObject, to: string, handover: boolean): Promise<number> {
    const epoch = this.#epochOf(o) + 1
    const m = o.metadata
    await this.#o.client.resource(type, m.namespace).patch(m.name!, {
      metadata: {
        resourceVersion: m.resourceVersion,
        labels: { [this.label]: to },
        annotations: { [this.#epoch]: String(epoch) },
      },
    })
    this.#log.debug('assigned', { object: keyOf(o), to, epoch })
    if (handover) this.#handovers?.inc()
    return epoch
  }
}
