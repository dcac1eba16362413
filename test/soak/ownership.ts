/**
 * @module ownership — the sharded soak's single-owner invariant, in two pure checks:
 * - no object reconciled by two replicas at once: the `reconciled` debug lines the Shard guard
 *   writes per reconcile (`from`/`to`, each process's wall clock — one machine, one clock) never
 *   overlap across processes for one object;
 * - after settling, every AppService is labelled with a live member, the one the ring names for
 *   it (rendezvous hashing over the live members), and its Deployment and Service carry the same
 *   label (their informers select on it).
 * And {@link checkOwnership}, which reads the cluster and the fleet for the second.
 */
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { ownerOf } from '../../src/sharding/ring.ts'
import type { Fleet } from './fleet.ts'
import type { Invariants } from './invariants.ts'

/** The invariant's id in sharded mode (it replaces single-leader). */
export const SINGLE_OWNER = 'single-owner'

/** One reconcile of one object by one process (epoch ms). */
export interface ReconcileSpan {
  process: string
  object: string
  from: number
  to: number
}

/**
 * Pairs of reconciles of the same object by different processes that overlap in time: the later
 * one started before the earlier one ended. Touching ends (one's `to` equal to the other's `from`)
 * do not overlap: the drain hands an object over only once its reconcile has returned.
 */
export function reconcileOverlaps(spans: readonly ReconcileSpan[]): [ReconcileSpan, ReconcileSpan][] {
  const byObject = new Map<string, ReconcileSpan[]>()
  for (const s of spans) byObject.set(s.object, [...(byObject.get(s.object) ?? []), s])
  const out: [ReconcileSpan, ReconcileSpan][] = []
  for (const list of byObject.values()) {
    // The span of each process that ends last so far.
    const latest = new Map<string, ReconcileSpan>()
    for (const s of list.sort((a, b) => a.from - b.from || a.to - b.to)) {
      for (const [p, e] of latest) if (p !== s.process && s.from < e.to) out.push([e, s])
      const e = latest.get(s.process)
      if (e === undefined || s.to > e.to) latest.set(s.process, s)
    }
  }
  return out
}

/** One AppService as the ownership check reads it: its key, its owner label, its children's. */
export interface OwnedObject {
  /** `namespace/name`, the key the ring hashes. */
  key: string
  owner: string | undefined
  /** The owner label of its Deployment and of its Service (undefined: no label, or no child). */
  children: { kind: string; owner: string | undefined }[]
}

/**
 * What is wrong with the ownership of `objects` when `live` are the live members: an object
 * without an owner, owned by a member that is not live, owned by another member than the ring
 * names, or with a child labelled differently.
 */
export function ownershipProblems(objects: readonly OwnedObject[], live: readonly string[]): string[] {
  const out: string[] = []
  for (const o of objects) {
    const want = ownerOf(o.key, live)
    if (o.owner === undefined) out.push(`${o.key} has no owner (the ring names ${want})`)
    else if (!live.includes(o.owner)) out.push(`${o.key} is owned by ${o.owner}, not a live member`)
    else if (o.owner !== want) out.push(`${o.key} is owned by ${o.owner}; the ring names ${want}`)
    for (const c of o.children)
      if (c.owner !== o.owner)
        out.push(`${o.key}: its ${c.kind} is labelled ${c.owner}, the AppService ${o.owner}`)
  }
  return out
}

/**
 * After settling: reads every AppService of `namespaces` and its children, and the live replicas'
 * member ids and objects owned (as last scraped), and records the {@link SINGLE_OWNER} checks:
 * {@link ownershipProblems}, and the replicas' `edgeop_shard_objects` summing to the AppServices.
 */
export async function checkOwnership(
  inv: Invariants,
  admin: KubeClient,
  namespaces: readonly string[],
  fleet: Fleet,
  label: string,
): Promise<void> {
  const ops = fleet.live('operator')
  const live = ops.map((p) => fleet.memberId(p)).filter((id): id is string => id !== undefined)
  inv.check(
    SINGLE_OWNER,
    live.length === ops.length,
    () => `${ops.length - live.length} replicas logged no member id`,
  )
  const objects: OwnedObject[] = []
  for (const ns of namespaces) {
    const labels = async (type: typeof CORE_TYPES.services | typeof CORE_TYPES.deployments) =>
      new Map(
        (await admin.resource(type, ns).list()).items.map((c) => [
          c.metadata.name,
          c.metadata.labels?.[label],
        ]),
      )
    const [deployments, services] = [await labels(CORE_TYPES.deployments), await labels(CORE_TYPES.services)]
    for (const a of (await admin.resource(APPSERVICES, ns).list()).items) {
      if (a.metadata.deletionTimestamp) continue
      const name = a.metadata.name!
      // An invalid spec leaves the children as they were (reconcile.ts): labelled by whoever last applied them.
      const invalid = a.status?.conditions?.some((c) => c.reason === 'InvalidConfiguration')
      const children = [
        ...(deployments.has(name) ? [{ kind: 'Deployment', owner: deployments.get(name) }] : []),
        ...(services.has(name) ? [{ kind: 'Service', owner: services.get(name) }] : []),
      ]
      objects.push({
        key: `${ns}/${name}`,
        owner: a.metadata.labels?.[label],
        children: invalid ? [] : children,
      })
    }
  }
  const problems = ownershipProblems(objects, live)
  for (const m of problems) inv.fail(SINGLE_OWNER, m)
  inv.pass(SINGLE_OWNER, Math.max(0, objects.length - problems.length))
  const owned = ops.reduce((n, p) => n + (p.owned ?? 0), 0)
  inv.check(
    SINGLE_OWNER,
    owned === objects.length,
    () => `the replicas report owning ${owned} objects (edgeop_shard_objects), there are ${objects.length}`,
  )
  inv.note(
    SINGLE_OWNER,
    `after settling: ${objects.length} AppServices over ${live.length} live members (${ops.map((p) => `${p.id} = ${fleet.memberId(p)}: ${p.owned ?? '?'}`).join(', ')})`,
  )
}
