/**
 * @module controller — informer events in, keys through a rate-limited queue, reconciles out.
 */
import { randomBytes } from 'node:crypto'
import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { type KubeObject, splitObjectKey } from '../core/types.ts'
import { defaultLogger } from '../observability/logger.ts'
import type { QueueMetrics } from '../queue/metrics.ts'
import type { RateLimiter } from '../queue/rate-limiter.ts'
import { createRateLimitingQueue, type RateLimitingQueue } from '../queue/rate-limiting-queue.ts'
import { ErrorStacks } from './error-stacks.ts'
import { allOf, type Predicate } from './predicates.ts'
import {
  isTerminalError,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  requestKey,
} from './reconciler.ts'

/** controller-runtime `MaxConcurrentReconciles` default: 1. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1
/** Poll period while waiting for handler registrations to sync (client-go `syncedPollPeriod`: 100 ms). */
export const SYNC_POLL_MS = 100

/** Anything that delivers object events (a {@link SharedInformer} does). */
export interface EventSource<T extends KubeObject = KubeObject> {
  readonly describe: string
  addEventHandler(handler: EventHandler<T>): HandlerRegistration
}

/** The primary resource: its events enqueue its own key. */
export interface PrimaryWatch<T extends KubeObject = KubeObject> {
  source: EventSource<T>
  /** Kind and API group of the primary (for matching owner references). */
  kind: string
  group: string
  /** Whether the primary is namespaced (owned objects map to `namespace/name` or `name`). */
  namespaced: boolean
  predicates?: Predicate<T>[]
}

/** Objects mapped to their controlling owner of the primary kind through `ownerReferences`. */
export interface OwnedWatch {
  source: EventSource
  predicates?: Predicate[]
}

/** Arbitrary related objects mapped to requests by a function. */
export interface MappedWatch {
  source: EventSource
  map(obj: KubeObject): ReconcileRequest[]
  predicates?: Predicate[]
}

/** Outcome label of a reconcile (controller-runtime `result` label). */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after'

/** Observes the loop for metrics. Must not throw. */
export interface ControllerObserver {
  onReconcile?(
    outcome: ReconcileOutcome,
    seconds: number,
    details: { terminal: boolean; panic: boolean },
  ): void
  onActiveWorkers?(active: number): void
}

/** Options of {@link Controller}. */
export interface ControllerOptions<T extends KubeObject = KubeObject> {
  name: string
  for: PrimaryWatch<T>
  owns?: OwnedWatch[]
  watches?: MappedWatch[]
  reconcile: Reconciler
  /** Workers; one key is never reconciled by two at once. Default 1. */
  maxConcurrentReconciles?: number
  /** Abort a reconcile's signal after this long (ms); the worker still waits for it to return. 0 = none. */
  reconcileTimeoutMs?: number
  rateLimiter?: RateLimiter<string>
  queueMetrics?: QueueMetrics
  observer?: ControllerObserver
  clock?: Clock
  /** Default {@link defaultLogger}: warnings and errors as JSON lines on stderr. */
  logger?: Logger
}

/**
 * A controller (controller-runtime's contract).
 *
 * Guarantees: events only enqueue keys (deduplicated while waiting); a key is never
 * reconciled by two workers at once, and an event during its reconcile queues it
 * again afterwards; workers start only after every handler has processed its
 * informer's initial list; an error requeues with per-item exponential backoff, a
 * {@link TerminalError} is not retried until the object changes, `requeueAfterMs`
 * polls and resets the backoff; a thrown non-Error is contained and counted as a panic; a
 * failure is logged at error level with its message, and with its stack frames the first time
 * the object fails with that error (again after a success; see {@link ErrorStacks}).
 * Does not guarantee: exactly-once reconciles (they are level-based and may repeat).
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string
  readonly queue: RateLimitingQueue<string>
  readonly #options: ControllerOptions<T>
  readonly #clock: Clock
  readonly #log: Logger
  readonly #registrations: HandlerRegistration[] = []
  readonly #stacks = new ErrorStacks()
  #active = 0
  #started = false

  constructor(options: ControllerOptions<T>) {
    this.name = options.name
    this.#options = options
    this.#clock = options.clock ?? realClock
    this.#log = (options.logger ?? defaultLogger()).child({ controller: options.name })
    this.queue = createRateLimitingQueue<string>({
      clock: this.#clock,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      ...(options.queueMetrics ? { metrics: options.queueMetrics } : {}),
    })
    this.#wire()
  }

  /** Enqueues a request (e.g. from a timer or an external system's callback). */
  enqueue(request: ReconcileRequest): void {
    this.queue.add(requestKey(request))
  }

  /** Reconciles currently running. */
  get activeWorkers(): number {
    return this.#active
  }

  /** True once every handler registration has processed its initial list. */
  hasSynced(): boolean {
    return this.#registrations.every((r) => r.hasSynced())
  }

  /**
   * Waits for the handlers to sync, then runs the workers until `signal` aborts; then
   * stops taking new work and resolves when in-flight reconciles have returned.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} is already running`)
    this.#started = true
    const stop = (): void => void this.queue.shutDownWithDrain()
    signal.addEventListener('abort', stop, { once: true })
    try {
      while (!this.hasSynced() && !signal.aborted) await new Promise((r) => setTimeout(r, SYNC_POLL_MS))
      if (signal.aborted) return
      const workers = Math.max(1, this.#options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES)
      this.#log.info('starting workers', { workers })
      await Promise.all(Array.from({ length: workers }, () => this.#worker(signal)))
    } finally {
      signal.removeEventListener('abort', stop)
      this.queue.shutDown()
    }
  }

  #wire(): void {
    const o = this.#options
    const own = (obj: KubeObject): string =>
      requestKey({ namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' })
    this.#register(o.for.source as EventSource, o.for.predicates as Predicate[] | undefined, (obj) => [
      own(obj),
    ])
    for (const w of o.owns ?? []) this.#register(w.source, w.predicates, (obj) => [this.#ownerKey(obj)])
    for (const w of o.watches ?? [])
      this.#register(w.source, w.predicates, (obj) => w.map(obj).map(requestKey))
  }

  /** Registers a handler mapping each event's object(s) to keys, after predicates. */
  #register(
    source: EventSource,
    predicates: Predicate[] | undefined,
    keys: (obj: KubeObject) => (string | undefined)[],
  ): void {
    const preds = predicates ?? []
    const add = (obj: KubeObject): void => {
      for (const k of keys(obj)) if (k !== undefined) this.queue.add(k)
    }
    this.#registrations.push(
      source.addEventHandler({
        onAdd: (obj) => {
          if (allOf(preds, 'create', obj)) add(obj)
        },
        onUpdate: (old, obj) => {
          if (!allOf(preds, 'update', old, obj)) return
          add(obj)
          // An owner or mapping may have changed: the old one must learn too (controller-runtime).
          for (const k of keys(old)) if (k !== undefined && !keys(obj).includes(k)) this.queue.add(k)
        },
        onDelete: (obj) => {
          if (allOf(preds, 'delete', obj)) add(obj)
        },
      }),
    )
  }

  /** The key of `obj`'s controlling owner if it is of the primary kind. */
  #ownerKey(obj: KubeObject): string | undefined {
    const p = this.#options.for
    const ref = obj.metadata.ownerReferences?.find((r) => r.controller)
    if (!ref || ref.kind !== p.kind) return undefined
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.lastIndexOf('/')) : ''
    if (group !== p.group) return undefined
    return requestKey({ namespace: p.namespaced ? obj.metadata.namespace : undefined, name: ref.name })
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const got = await this.queue.get()
      if (got.shutdown) return
      this.#active++
      this.#options.observer?.onActiveWorkers?.(this.#active)
      try {
        await this.#reconcileOne(got.item, signal)
      } finally {
        this.queue.done(got.item)
        this.#active--
        this.#options.observer?.onActiveWorkers?.(this.#active)
      }
    }
  }

  async #reconcileOne(key: string, stop: AbortSignal): Promise<void> {
    const o = this.#options
    const { namespace, name } = splitObjectKey(key)
    const reconcileId = randomBytes(8).toString('hex')
    const log = this.#log.child({ object: key, reconcileID: reconcileId })
    const timeout = o.reconcileTimeoutMs ? AbortSignal.timeout(o.reconcileTimeoutMs) : undefined
    const signal = timeout ? AbortSignal.any([stop, timeout]) : stop
    const started = this.#clock.monotonic()
    let outcome: ReconcileOutcome = 'success'
    let terminal = false
    let panic = false
    try {
      const result = (await o.reconcile({ namespace, name }, { signal, log, reconcileId })) as ReconcileResult
      if (result && 'requeueAfterMs' in result) {
        outcome = 'requeue_after'
        this.queue.forget(key)
        this.queue.addAfter(key, result.requeueAfterMs)
      } else if (result && 'requeue' in result && result.requeue) {
        outcome = 'requeue'
        this.queue.addRateLimited(key)
      } else {
        this.queue.forget(key)
      }
      this.#stacks.forget(key)
    } catch (err) {
      outcome = 'error'
      panic = !(err instanceof Error) && !isTerminalError(err)
      // The throw site, the first time this object fails this way (frames only: no message, no cause).
      const stack = err instanceof Error ? this.#stacks.stackFor(key, err) : undefined
      const where = stack === undefined ? {} : { stack }
      if (isTerminalError(err)) {
        terminal = true
        this.queue.forget(key)
        log.error('reconcile failed permanently; waiting for the object to change', {
          error: errorMessage(err),
          ...where,
        })
      } else {
        if (!stop.aborted) this.queue.addRateLimited(key)
        log.error(panic ? 'reconcile threw a non-error value' : 'reconcile failed; will retry', {
          error: errorMessage(err),
          retries: this.queue.numRequeues(key),
          ...where,
        })
      }
    } finally {
      o.observer?.onReconcile?.(outcome, (this.#clock.monotonic() - started) / 1000, { terminal, panic })
    }
  }
}
