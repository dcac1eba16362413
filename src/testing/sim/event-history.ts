/**
 * @module event-history — the changes a store keeps for watches and paginated lists, and the
 * compaction that forgets them (older resourceVersions are then 410 Expired).
 */
import type { KubeObject } from '../../core/types.ts'
import { expired } from './api-status.ts'

/** One change, as a watch sees it. */
export interface StoreEvent {
  /** The resourceVersion of the change. */
  rv: number
  /** What happened, as a watch names it. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  /** `group/resource`. */
  collection: string
  /** `namespace/name` (or `name`). */
  key: string
  /** The object after the change (for DELETED: its last state, with the deletion's resourceVersion). */
  object: KubeObject
  /** The object before the change (undefined for ADDED). */
  previous: KubeObject | undefined
}

/** Events kept for watches and paginated lists before the oldest are compacted away (etcd's compaction keeps 5 minutes of them; this bounds memory instead). */
export const DEFAULT_HISTORY_EVENTS = 5_000

/** The kept changes, in resourceVersion order. */
export class EventHistory {
  /** The oldest resourceVersion a watch or a paginated list may start from; older ones are 410. */
  floor = 1
  readonly #events: StoreEvent[] = []
  readonly #limit: number

  /** Keeps the latest `limit` events. */
  constructor(limit: number) {
    this.#limit = limit
  }

  /** Keeps `e`; the oldest event beyond the limit is compacted away. */
  record(e: StoreEvent): void {
    this.#events.push(e)
    if (this.#events.length > this.#limit) {
      const dropped = this.#events.splice(0, this.#events.length - this.#limit)
      this.floor = (dropped[dropped.length - 1] as StoreEvent).rv + 1
    }
  }

  /** Forgets every event up to `rv` (etcd compaction). */
  compact(rv: number): void {
    this.floor = rv + 1
    this.#events.length = 0
  }

  /** Events of `collection` after `rv`. @throws ApiStatus 410 when `rv` is compacted. */
  after(collection: string, rv: number): StoreEvent[] {
    if (rv < this.floor - 1) throw expired(rv)
    return this.#events.filter((e) => e.rv > rv && e.collection === collection)
  }

  /** `now` (the collection's objects by key, changed in place) undone back to `rv`. @throws ApiStatus 410 when compacted. */
  rewind(collection: string, rv: number, now: Map<string, KubeObject>): Map<string, KubeObject> {
    if (rv < this.floor - 1) throw expired(rv)
    for (let i = this.#events.length - 1; i >= 0; i--) {
      const e = this.#events[i] as StoreEvent
      if (e.rv <= rv) break
      if (e.collection !== collection) continue
      if (e.previous) now.set(e.key, e.previous)
      else now.delete(e.key)
    }
    return now
  }
}
