/**
 * @module watch-session — one open watch: the events of its collection that match its selectors,
 * delivered in resourceVersion order after the view's lag, with bookmarks and the server's timeout.
 */
import type { Clock } from '../../core/clock.ts'
import type { KubeObject } from '../../core/types.ts'
import type { StoreEvent } from './object-store.ts'
import type { StreamBody } from './response-body.ts'

/** How often an idle watch that asked for them gets a BOOKMARK: 1 minute, as kube-apiserver's watch cache sends them (`bookmarkFrequency`). */
export const BOOKMARK_INTERVAL_MS = 60_000

/** What a watch shows its client, set per process by faults. */
export interface WatchView {
  /** Delay of every event (a lagging watch cache: stale reads). */
  lagMs: number
  /** Merge undelivered events of one object into the last (intermediate states never observed). */
  coalesce: boolean
}

type Delivered = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; rv: number }

/**
 * One watch. Selectors are applied to the object before and after each change, as the API server
 * does: an object that starts matching arrives as ADDED, one that stops matching as DELETED.
 */
export class WatchSession {
  /** The simulated process that opened it. */
  readonly process: string
  /** `group/resource` it watches. */
  readonly collection: string
  readonly #body: StreamBody
  readonly #match: (o: KubeObject) => boolean
  readonly #clock: Clock
  readonly #view: () => WatchView
  readonly #bookmarks: boolean
  readonly #currentRv: () => number
  #pending: Delivered[] = []
  #flushing: (() => void) | undefined
  #cancelBookmark: (() => void) | undefined
  #cancelTimeout: (() => void) | undefined

  /** A session writing to `body`. */
  constructor(o: {
    process: string
    collection: string
    body: StreamBody
    match: (o: KubeObject) => boolean
    clock: Clock
    view: () => WatchView
    bookmarks: boolean
    timeoutMs: number
    currentRv: () => number
  }) {
    this.process = o.process
    this.collection = o.collection
    this.#body = o.body
    this.#match = o.match
    this.#clock = o.clock
    this.#view = o.view
    this.#bookmarks = o.bookmarks
    this.#currentRv = o.currentRv
    if (o.bookmarks) this.#scheduleBookmark()
    if (o.timeoutMs > 0) this.#cancelTimeout = o.clock.setTimer(() => this.close(), o.timeoutMs)
  }

  /** Whether the stream has ended. */
  get closed(): boolean {
    return this.#body.ended
  }

  /** Sends one synthetic or replayed event at once (initial state, history). */
  sendNow(type: Delivered['type'], object: KubeObject): void {
    this.#body.push(JSON.stringify({ type, object }))
  }

  /** A BOOKMARK at `rv`, with the initial-events-end annotation when `initialEnd`. */
  bookmark(rv: number, initialEnd = false): void {
    this.#body.push(
      JSON.stringify({
        type: 'BOOKMARK',
        object: {
          metadata: {
            resourceVersion: String(rv),
            ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
          },
        },
      }),
    )
  }

  /** Takes a store change: queued (filtered by the selectors) and delivered after the view's lag. */
  offer(e: StoreEvent): void {
    const was = e.previous !== undefined && e.type !== 'ADDED' && this.#match(e.previous)
    const is = e.type !== 'DELETED' && this.#match(e.object)
    let type: Delivered['type']
    if (e.type === 'DELETED') {
      if (!this.#match(e.object) && !was) return
      type = 'DELETED'
    } else if (was && is) type = 'MODIFIED'
    else if (is) type = 'ADDED'
    else if (was) type = 'DELETED'
    else return
    const view = this.#view()
    const item: Delivered = { type, object: e.object, rv: e.rv }
    if (view.coalesce) this.#coalesce(item)
    else this.#pending.push(item)
    if (!this.#flushing) {
      const cancel = this.#clock.setTimer(() => this.#flush(), view.lagMs)
      this.#flushing = cancel
    }
  }

  /** The server ends the watch (timeout, restart, partition): the client reconnects from its last RV. */
  close(): void {
    this.#cancelBookmark?.()
    this.#cancelTimeout?.()
    this.#flushing?.()
    this.#body.end()
  }

  /** The connection breaks mid-stream: the reader gets a socket error. */
  fail(): void {
    this.#cancelBookmark?.()
    this.#cancelTimeout?.()
    this.#flushing?.()
    this.#body.fail(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))
  }

  #coalesce(item: Delivered): void {
    const key = `${item.object.metadata.namespace}/${item.object.metadata.name}`
    const i = this.#pending.findIndex(
      (p) => `${p.object.metadata.namespace}/${p.object.metadata.name}` === key,
    )
    if (i < 0) {
      this.#pending.push(item)
      return
    }
    const before = this.#pending[i] as Delivered
    this.#pending.splice(i, 1)
    // ADDED then DELETED: the client never saw it; ADDED then MODIFIED: still ADDED.
    if (before.type === 'ADDED' && item.type === 'DELETED') return
    this.#pending.push(before.type === 'ADDED' ? { ...item, type: 'ADDED' } : item)
  }

  #flush(): void {
    this.#flushing = undefined
    if (this.closed) return
    const items = this.#pending
    this.#pending = []
    for (const d of items) this.sendNow(d.type, d.object)
  }

  #scheduleBookmark(): void {
    this.#cancelBookmark = this.#clock.setTimer(() => {
      if (this.closed) return
      if (this.#pending.length === 0) this.bookmark(this.#currentRv())
      this.#scheduleBookmark()
    }, BOOKMARK_INTERVAL_MS)
  }
}
