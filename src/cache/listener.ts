/**
 * @module listener — one event handler behind its own buffer.
 *
 * Each handler gets an unbounded FIFO of notifications that it drains at its own
 * pace (client-go `processorListener`): a slow handler grows only its own buffer and
 * never stalls the watch or other handlers. Per handler, notifications are delivered
 * one at a time and in order. The buffer is core's {@link RingBuffer}: a delivered
 * notification is released at once (kubernetes/kubernetes#105031) and the buffer shrinks after a burst.
 */
import { raceAbort } from '../core/abort.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { RingBuffer } from '../core/ring-buffer.ts'
import type { KubeObject } from '../core/types.ts'

/** What a delete notification knows. */
export interface DeleteInfo {
  /**
   * The object vanished while the watch was down and was found missing at a relist:
   * `obj` is the last state the cache saw, possibly stale (client-go `DeletedFinalStateUnknown`).
   */
  finalStateUnknown: boolean
}

/**
 * Informer callbacks. They may be async; the next notification for this handler waits
 * for the returned promise. They must not modify the objects they receive.
 */
export interface EventHandler<T extends KubeObject = KubeObject> {
  /**
   * `metadata`: every callback reads only `apiVersion`, `kind` and the metadata a compact store scans
   * (name, namespace, uid, resourceVersion, generation, deletionTimestamp, labels, annotations,
   * ownerReferences), so a compact store delivers its entries as they are, decoding nothing (an eager
   * store delivers its objects, which hold more). Unset: whole, decoded objects.
   */
  readonly reads?: 'metadata'
  /**
   * `metadata`: `onUpdate` reads only that metadata of the old state (as {@link reads} says), so a compact
   * store decodes only the new one. Implied by `reads: 'metadata'`.
   */
  readonly readsOld?: 'metadata'
  /** `isInInitialList`: part of the state present when the handler was registered or at first sync. */
  onAdd?(obj: T, isInInitialList: boolean): unknown
  /** An object changed; a handler resync re-delivers every cached object as `onUpdate(obj, obj)`. */
  onUpdate?(oldObj: T, newObj: T): unknown
  /** An object is gone; see {@link DeleteInfo} for a deletion found only at a relist. */
  onDelete?(obj: T, info: DeleteInfo): unknown
}

/** A handler's registration. */
export interface HandlerRegistration {
  /** The informer synced and this handler has processed every initial object (kubernetes/kubernetes#113985). */
  hasSynced(): boolean
  /**
   * Resolves once {@link hasSynced} holds (at once if it already does, even when `signal` has
   * aborted). Rejects with `EDGEOP_ERR_ABORTED` (the signal's reason as cause) if `signal` aborts
   * first. Without a signal it waits as long as it takes.
   */
  whenSynced(signal?: AbortSignal): Promise<void>
  /** Notifications buffered and not yet processed. */
  readonly pending: number
  /** Stops delivery; already-buffered notifications are dropped. Idempotent. */
  remove(): void
}

/** A buffered notification. */
export type Notification<T extends KubeObject> =
  | { kind: 'add'; obj: T; initial: boolean }
  | { kind: 'update'; old: T; obj: T }
  | { kind: 'delete'; obj: T; stale: boolean }

/** @internal The informer's side of a registration. */
export class Listener<T extends KubeObject> implements HandlerRegistration {
  readonly handler: EventHandler<T>
  readonly resyncPeriodMs: number
  nextResyncAt = 0
  readonly #buffer = new RingBuffer<Notification<T>>()
  #draining = false
  #initialPending = 0
  #removed = false
  readonly #informerSynced: () => boolean
  readonly #informerWhenSynced: () => Promise<void>
  /** Woken when the initial notifications are all processed, or on removal. */
  readonly #syncWaiters = new Set<() => void>()
  readonly #onRemove: (l: Listener<T>) => void
  readonly #log: Logger
  readonly #resolve: (entry: T) => T

  constructor(
    handler: EventHandler<T>,
    resyncPeriodMs: number,
    informerSynced: () => boolean,
    informerWhenSynced: () => Promise<void>,
    onRemove: (l: Listener<T>) => void,
    log: Logger,
    resolve: (entry: T) => T = (entry) => entry,
  ) {
    this.#resolve = resolve
    this.handler = handler
    this.resyncPeriodMs = resyncPeriodMs
    this.#informerSynced = informerSynced
    this.#informerWhenSynced = informerWhenSynced
    this.#onRemove = onRemove
    this.#log = log
  }

  get pending(): number {
    return this.#buffer.length
  }

  hasSynced(): boolean {
    return this.#informerSynced() && this.#initialPending === 0
  }

  whenSynced(signal?: AbortSignal): Promise<void> {
    if (this.hasSynced()) return Promise.resolve()
    return raceAbort(
      this.#synced(),
      signal,
      () =>
        new EdgeopError('EDGEOP_ERR_ABORTED', 'stopped waiting for an event handler to sync', {
          step: 'wait for handler sync',
          cause: signal?.reason,
        }),
    )
  }

  async #synced(): Promise<void> {
    await this.#informerWhenSynced()
    while (!this.hasSynced()) await new Promise<void>((resolve) => this.#syncWaiters.add(resolve))
  }

  #wakeSyncWaiters(): void {
    for (const wake of this.#syncWaiters) wake()
    this.#syncWaiters.clear()
  }

  remove(): void {
    if (this.#removed) return
    this.#removed = true
    this.#buffer.clear()
    this.#initialPending = 0
    this.#onRemove(this)
    this.#wakeSyncWaiters()
  }

  /** Buffers a notification and schedules draining. */
  notify(n: Notification<T>): void {
    if (this.#removed) return
    if (n.kind === 'add' && n.initial) this.#initialPending++
    this.#buffer.push(n)
    if (!this.#draining) {
      this.#draining = true
      queueMicrotask(() => void this.#drain())
    }
  }

  async #drain(): Promise<void> {
    while (this.#buffer.length > 0 && !this.#removed) {
      const n = this.#buffer.shift()!
      try {
        const r = this.#call(n)
        if (r !== undefined && typeof (r as Promise<unknown>).then === 'function') await r
      } catch (err) {
        this.#log.error('event handler failed', { event: n.kind, error: errorMessage(err) })
      } finally {
        if (n.kind === 'add' && n.initial && this.#initialPending > 0) {
          this.#initialPending--
          if (this.#initialPending === 0) this.#wakeSyncWaiters()
        }
      }
    }
    this.#draining = false
  }

  /**
   * Delivers `n`, its entries resolved to objects only now (a compact store's backlog stays bytes), and only
   * those the handler reads beyond metadata ({@link EventHandler.reads}, {@link EventHandler.readsOld}).
   */
  #call(n: Notification<T>): unknown {
    const h = this.handler
    const whole = h.reads !== 'metadata'
    const resolve = (e: T): T => (whole ? this.#resolve(e) : e)
    switch (n.kind) {
      case 'add':
        return h.onAdd?.(resolve(n.obj), n.initial)
      case 'update':
        return h.onUpdate?.(h.readsOld === 'metadata' ? n.old : resolve(n.old), resolve(n.obj))
      case 'delete':
        return h.onDelete?.(resolve(n.obj), { finalStateUnknown: n.stale })
    }
  }
}
