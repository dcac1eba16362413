/**
 * @module bucket-store — the external system the Bucket controller manages, as an interface, and
 * an in-process fake of it for the example and its test.
 *
 * A real operator would call a cloud storage API here. What matters to the controller is the
 * contract: `ensure` and `remove` are idempotent ("already there" and "already gone" are
 * successes), and either may fail transiently.
 */

/** What the controller needs from the storage system. */
export interface BucketStore {
  /** Creates the bucket `id` if missing (idempotent); resolves to its URL. */
  ensure(id: string, storageClass: string): Promise<string>
  /** Deletes the bucket `id`; an unknown `id` counts as done. */
  remove(id: string): Promise<void>
}

/**
 * A BucketStore in memory. `failRemovals` makes every `remove` throw until it is set back to
 * false, so a test can show that the finalizer holds the object until cleanup succeeds.
 */
export class InMemoryBucketStore implements BucketStore {
  /** id → storage class of each bucket that exists. */
  readonly buckets = new Map<string, string>()
  /** When true, `remove` throws (a storage API that is down). */
  failRemovals = false
  /** How many `remove` calls threw because of `failRemovals`. */
  failedRemovals = 0

  /** See {@link BucketStore.ensure}. */
  async ensure(id: string, storageClass: string): Promise<string> {
    this.buckets.set(id, storageClass)
    return `memory://${id}`
  }

  /** See {@link BucketStore.remove}. */
  async remove(id: string): Promise<void> {
    if (this.failRemovals) {
      this.failedRemovals++
      throw new Error(`storage API unavailable: cannot delete bucket ${id}`)
    }
    this.buckets.delete(id)
  }
}
