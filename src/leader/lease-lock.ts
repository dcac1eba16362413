/**
 * @module lease-lock — the leader election record stored in a `coordination.k8s.io/v1` Lease.
 *
 * client-go `tools/leaderelection/resourcelock/leaselock.go`: the lock keeps the last Lease it read or
 * wrote, and `update` PUTs *that object* with a new spec, so the Lease's `metadata.resourceVersion`
 * turns the write into a compare-and-swap: any write in between makes the server answer 409 Conflict.
 *
 * RBAC the identity needs on `leases` in the namespace: `get`, `create`, `update`.
 */

import type { CallOptions } from '../client/call-options.ts'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES } from '../client/resource.ts'
import { EdgeopError } from '../core/errors.ts'
import type { Lease } from '../core/types.ts'
import { isNotFound } from '../transport/api-error.ts'
import type { ResourceLock } from './lock.ts'
import { type LeaderElectionRecord, leaseSpecToRecord, recordToLeaseSpec } from './record.ts'

/** The three verbs the lock uses; a namespaced `ResourceClient<Lease>` has them. */
export interface LeaseApi {
  /** Reads the Lease by name. */
  get(name: string, options?: CallOptions): Promise<Lease>
  /** Creates the Lease; a 409 means another candidate created it first. */
  create(lease: Lease, options?: CallOptions): Promise<Lease>
  /** Replaces the Lease; a 409 means it changed since it was read. */
  update(lease: Lease, options?: CallOptions): Promise<Lease>
}

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Namespace of the Lease. */
  namespace: string
  /** Name of the Lease (controller-runtime `LeaderElectionID`). */
  name: string
  /** This candidate's identity, unique among candidates (controller-runtime: `<hostname>_<uuid>`). */
  identity: string
  /** Labels merged into the Lease on every create and update (client-go `LeaseLock.Labels`). */
  labels?: Readonly<Record<string, string>>
  /**
   * Deadline of each API call (ms). Default: the client's own; the elector additionally bounds every
   * call by its renew deadline through the signal.
   */
  timeoutMs?: number
}

/**
 * A {@link ResourceLock} on a Lease.
 *
 * Guarantees:
 * - `update` sends the last Lease read or written by this lock (its `resourceVersion` included) with
 *   the spec replaced by the record: a write that raced another one fails with 409 Conflict;
 * - a failed `update` (conflict, timeout, 5xx, abort…) keeps the cached Lease, so the next `update`
 *   is sent again instead of failing with "not initialized" (kubernetes/kubernetes#95939);
 * - `get` of a missing Lease resolves undefined; every other failure rejects with the `ApiError`.
 *
 * Does not guarantee: anything about writes by parties that do not use the resourceVersion (a
 * server-side apply or an unconditional PUT by a human overwrites the record).
 *
 * @example
 * const lock = LeaseLock.fromClient(client, { namespace: 'ops', name: 'my-operator', identity: `${hostname()}_${randomUUID()}` })
 */
export class LeaseLock implements ResourceLock {
  /** This candidate's identity, written as `holderIdentity`. */
  readonly identity: string
  /** Namespace of the Lease. */
  readonly namespace: string
  /** Name of the Lease. */
  readonly name: string
  readonly #api: LeaseApi
  readonly #labels: Readonly<Record<string, string>> | undefined
  readonly #timeoutMs: number | undefined
  /** The last Lease read or written; never cleared by a failure (kubernetes/kubernetes#95939). */
  #lease: Lease | undefined

  /** A lock on Lease `namespace/name` through `api`; reads or writes nothing until used. */
  constructor(api: LeaseApi, options: LeaseLockOptions) {
    this.#api = api
    this.namespace = options.namespace
    this.name = options.name
    this.identity = options.identity
    this.#labels = options.labels
    this.#timeoutMs = options.timeoutMs
  }

  /** A lock on Lease `namespace/name` through `client`. */
  static fromClient(client: KubeClient, options: LeaseLockOptions): LeaseLock {
    return new LeaseLock(client.resource<Lease>(CORE_TYPES.leases, options.namespace), options)
  }

  /** `namespace/name` of the Lease, for logs. */
  describe(): string {
    return `${this.namespace}/${this.name}`
  }

  /** The current record, or undefined when the Lease does not exist. */
  async get(signal?: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    let lease: Lease
    try {
      lease = await this.#api.get(this.name, this.#call(signal))
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
    this.#lease = lease
    return leaseSpecToRecord(lease.spec)
  }

  /** Creates the Lease with `record`. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        ...(this.#labels === undefined ? {} : { labels: { ...this.#labels } }),
      },
      spec: recordToLeaseSpec(record),
    }
    this.#lease = await this.#api.create(lease, this.#call(signal))
  }

  /** Writes `record` over the Lease last read, guarded by its resourceVersion. */
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const cached = this.#lease
    if (cached === undefined) {
      throw new EdgeopError(
        'EDGEOP_ERR_LEADER',
        `lease ${this.describe()} not initialized: get or create it first`,
        {
          step: `update lease ${this.describe()}`,
        },
      )
    }
    const labels =
      this.#labels === undefined ? cached.metadata.labels : { ...cached.metadata.labels, ...this.#labels }
    const next: Lease = {
      ...cached,
      metadata: { ...cached.metadata, labels },
      spec: recordToLeaseSpec(record),
    }
    // Assigned only on success: a failure leaves the cached Lease (and its resourceVersion) as it was.
    this.#lease = await this.#api.update(next, this.#call(signal))
  }

  #call(signal: AbortSignal | undefined): CallOptions {
    return {
      signal,
      timeoutMs: this.#timeoutMs,
    }
  }
}
