/**
 * @module ring — who owns what: rendezvous hashing over the live members, and which members are live.
 *
 * Pure (time is a parameter). Rendezvous (highest random weight) hashing rather than a consistent
 * hash ring with virtual nodes: with a handful of members it needs no tuning and no table, and a
 * membership change moves exactly the objects that must move — those of a member that left, and a
 * ~1/N share to a member that joined (Thaler & Ravishankar 1998; kube-state-metrics and Argo CD
 * shard by a plain modulo, which moves most objects on every change).
 */
import { createHash } from 'node:crypto'
import type { Lease } from '../core/types.ts'

/** The weight of `member` for `key`: the first 32 bits of SHA-1 (uniform; not a security use). */
const weight = (member: string, key: string) =>
  createHash('sha1').update(`${member}\0${key}`).digest().readUInt32BE(0)

/** The member that owns `key` (e.g. `namespace/name`): the one of highest weight; undefined without members. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let owner: string | undefined
  let top = -1
  for (const m of members) {
    const w = weight(m, key)
    if (w > top || (w === top && m < owner!)) [owner, top] = [m, w]
  }
  return owner
}

/**
 * The members of a ring, judged from its membership Leases as the elector judges a leader: a member
 * is *live* while its Lease is held (`holderIdentity` set) and has changed (its `resourceVersion`)
 * within its `leaseDurationSeconds` on the local monotonic clock, counted from when this process
 * first saw that version — clock skew between replicas does not matter, and a Lease seen for the
 * first time counts as live (it may be renewed elsewhere). A released Lease ends membership at once.
 * A live member is *in the ring* (is given objects) once this process has seen its Lease change,
 * so that a replica just started does not hand objects to a dead member whose Lease it has not yet
 * watched expire.
 */
export class Membership {
  /** Member id → [the Lease version last seen, when (local clock, ms), whether seen changing]. */
  #seen = new Map<string, [string, number, boolean]>()
  readonly #label: string
  readonly #self: string

  /** Members are named by the value of `label` on their Lease; `self` is in the ring while live. */
  constructor(label: string, self: string) {
    this.#label = label
    this.#self = self
  }

  /** Records `leases` (every membership Lease of the ring) seen at `now` (ms); returns the live members and the ring, sorted. */
  observe(leases: readonly Lease[], now: number): [live: string[], ring: string[]] {
    const seen = new Map<string, [string, number, boolean]>()
    const live: string[] = []
    const ring: string[] = []
    for (const l of leases) {
      const id = l.metadata.labels?.[this.#label]
      if (!id || !l.spec?.holderIdentity) continue
      const v = l.metadata.resourceVersion ?? ''
      const last = this.#seen.get(id)
      const e: [string, number, boolean] = last?.[0] === v ? last : [v, now, !!last]
      seen.set(id, e)
      if (now - e[1] < (l.spec.leaseDurationSeconds ?? 0) * 1000) {
        live.push(id)
        if (e[2] || id === this.#self) ring.push(id)
      }
    }
    this.#seen = seen
    return [live.sort(), ring.sort()]
  }
}
