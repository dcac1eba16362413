/**
 * @module controller — informer events in, keys through a rate-limited queue, reconciles out.
 */
import { randomBytes } from 'node:crypto'
import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { deadlineSignal } from '../core/deadline.ts'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { type KubeObject, splitObjectKey } from '../core/types.ts'
import type { ControllerObserver, ReconcileOutcome } from '../observability/controller-observer.ts'
import { defaultLogger } from '../observability/logger.ts'
import { DeferredQueueMetrics } from '../queue/deferred-metrics.ts'
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

export type { ControllerObserver, ReconcileOutcome } from '../observability/controller-observer.ts'

/** controller-runtime `MaxConcurrentReconciles` default: 1. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1

/** Anything that delivers object events (a `SharedInformer` does). */
export interface EventSource<T extends KubeObject = KubeObject> {
  /** Names the source in logs, e.g. `configmaps in shop`. */
  readonly describe: string
  /**
   * Registers `handler`; the registration reports when the handler has processed the source's
   * initial state ({@link HandlerRegistration.whenSynced}).
   */
  addEventHandler(handler: EventHandler<T>): HandlerRegistration
}

/** The primary resource: its events enqueue its own key. */
export interface PrimaryWatch<T extends KubeObject = KubeObject> {
  /** Where the primary objects' events come from. */
  source: EventSource<T>
  /** Kind of the primary, e.g. `ConfigMap` (owner references are matched on it). */
  kind: string
  /** API group of the primary, `''` for core (owner references are matched on it). */
  group: string
  /** Whether the primary is namespaced (owned objects map to `namespace/name` or `name`). */
  namespaced: boolean
  /** Events pass only when every predicate passes. */
  predicates?: Predicate<T>[]
}

/** Objects mapped to their controlling owner of the primary kind through `ownerReferences`. */
export interface OwnedWatch {
  /** Where the owned objects' events come from. */
  source: EventSource
  /** Events pass only when every predicate passes. */
  predicates?: Predicate[]
}

/** Arbitrary related objects mapped to requests by a function. */
export interface MappedWatch {
  /** Where the related objects' events come from. */
  source: EventSource
  /** The requests an event on `obj` (and, on update, on its old state) enqueues. */
  map(obj: KubeObject): ReconcileRequest[]
  /** Events pass only when every predicate passes. */
  predicates?: Predicate[]
}

/**
 * Metrics hooks made on demand, for {@link Controller.instrument}: each is called at most once, and
 * only when the controller has no such hook yet.
 */
export interface ControllerInstrumentation {
  /** Makes the reconcile observer (e.g. `reconcileMetrics(registry, name, workers)`). */
  observer?: () => ControllerObserver
  /** Makes the workqueue metrics sink (e.g. `workqueueMetrics(registry, name)`). */
  queueMetrics?: () => QueueMetrics
}

/** Options of {@link Controller}. */
export interface ControllerOptions<T extends KubeObject = KubeObject> {
  /** Unique per process: the `controller` label of its metrics and log lines. */
  name: string
  /** The primary resource. */
  for: PrimaryWatch<T>
  /** Resources whose controlling owner of the primary kind is enqueued. */
  owns?: OwnedWatch[]
  /** Other resources, mapped to requests by a function. */
  watches?: MappedWatch[]
  /** The reconciler. */
  reconcile: Reconciler
  /** Workers; one key is never reconciled by two at once. Default {@link DEFAULT_MAX_CONCURRENT_RECONCILES}. */
  maxConcurrentReconciles?: number
  /**
   * Abort a reconcile's signal after this long (ms, on `clock`); the worker still waits for it to
   * return, and a failure after that counts as a `timeout`. 0 or absent = none.
   */
  reconcileTimeoutMs?: number
  /** Retry policy of the queue. Default: `defaultControllerRateLimiter` (per-item 5 ms → 1000 s, max'd with 10 qps burst 100). */
  rateLimiter?: RateLimiter<string>
  /** Workqueue metrics. Absent: a manager's {@link Controller.instrument} may provide them. */
  queueMetrics?: QueueMetrics
  /** Reconcile metrics. Absent: a manager's {@link Controller.instrument} may provide them. */
  observer?: ControllerObserver
  /** Time source of the queue, the reconcile timeout and the durations reported. Default: real time. */
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
 * informer's initial list (awaited, not polled); an error requeues with per-item exponential
 * backoff, a {@link TerminalError} is not retried until the object changes, `requeueAfterMs`
 * polls and resets the backoff; a thrown non-Error is contained and counted as a panic; a reconcile
 * still failing after `reconcileTimeoutMs` counts as a timeout; every reconcile is reported to the
 * observer with one {@link ReconcileOutcome}; a failure is logged at error level with its message,
 * and with its stack frames the first time the object fails with that error (again after a success;
 * see {@link ErrorStacks}). All timing runs on the injected clock.
 * Does not guarantee: exactly-once reconciles (they are level-based and may repeat).
 */
export class Controller<T extends KubeObject = KubeObject> {
  /** Its name: the `controller` label of its metrics and log lines. */
  readonly name: string
  /** The work queue of request keys (`namespace/name` or `name`). */
  readonly queue: RateLimitingQueue<string>
  /** Workers that reconcile in parallel (at least 1). */
  readonly maxConcurrentReconciles: number
  readonly #options: ControllerOptions<T>
  readonly #clock: Clock
  readonly #log: Logger
  readonly #registrations: HandlerRegistration[] = []
  readonly #stacks = new ErrorStacks()
  /** Stands in for workqueue metrics that {@link instrument} may bind later; undefined when given. */
  readonly #deferredQueueMetrics: DeferredQueueMetrics | undefined
  #observer: ControllerObserver | undefined
  #active = 0
  #started = false

  /** Wires the event handlers at once; starts nothing until {@link run}. */
  constructor(options: ControllerOptions<T>) {
    this.name = options.name
    this.#options = options
    this.#clock = options.clock ?? realClock
    this.#log = (options.logger ?? defaultLogger()).child({ controller: options.name })
    this.maxConcurrentReconciles = Math.max(
      1,
      options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES,
    )
    this.#observer = options.observer
    this.#deferredQueueMetrics = options.queueMetrics ? undefined : new DeferredQueueMetrics()
    this.queue = createRateLimitingQueue<string>({
      clock: this.#clock,
      metrics: options.queueMetrics ?? this.#deferredQueueMetrics,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    })
    this.#wire()
  }

  /**
   * Gives the controller the metrics hooks it has none of (neither in its options nor from an
   * earlier call): each factory is called at most once. Hooks given in the options win. Work queued
   * before is accounted for (depth, adds, retries). Throws `EDGEOP_ERR_INVALID` once {@link run}
   * has started. The manager calls this for every controller it is given.
   */
  instrument(hooks: ControllerInstrumentation): void {
    if (this.#started)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `controller ${this.name} is already running`, {
        step: 'instrument controller',
      })
    if (hooks.observer && !this.#observer) this.#observer = hooks.observer()
    const deferred = this.#deferredQueueMetrics
    if (hooks.queueMetrics && deferred && !deferred.bound) deferred.bind(hooks.queueMetrics())
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
   * stops taking new work and resolves when in-flight reconciles have returned. A signal that
   * aborts before the handlers synced resolves without reconciling anything.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} is already running`)
    this.#started = true
    const stop = (): void => void this.queue.shutDownWithDrain()
    signal.addEventListener('abort', stop, { once: true })
    try {
      if (!(await this.#whenSynced(signal))) return
      const workers = this.maxConcurrentReconciles
      this.#log.info('starting workers', { workers })
      await Promise.all(Array.from({ length: workers }, () => this.#worker(signal)))
    } finally {
      signal.removeEventListener('abort', stop)
      this.queue.shutDown()
    }
  }

  /** True once every registration synced; false when `signal` aborted first. */
  async #whenSynced(signal: AbortSignal): Promise<boolean> {
    try {
      await Promise.all(this.#registrations.map((r) => r.whenSynced(signal)))
      return !signal.aborted
    } catch (err) {
      if (isEdgeopError(err, 'EDGEOP_ERR_ABORTED') && signal.aborted) return false
      throw err
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
      this.#observer?.onActiveWorkers?.(this.#active)
      try {
        await this.#reconcileOne(got.item, signal)
      } finally {
        this.queue.done(got.item)
        this.#active--
        this.#observer?.onActiveWorkers?.(this.#active)
      }
    }
  }

  async #reconcileOne(key: string, stop: AbortSignal): Promise<void> {
    const o = this.#options
    const { namespace, name } = splitObjectKey(key)
    const reconcileId = randomBytes(8).toString('hex')
    const log = this.#log.child({ object: key, reconcileID: reconcileId })
    const timeoutMs = o.reconcileTimeoutMs ? o.reconcileTimeoutMs : undefined
    let timedOut = false
    const deadline = deadlineSignal(
      this.#clock,
      timeoutMs,
      () => {
        timedOut = true
        return new EdgeopError('EDGEOP_ERR_TIMEOUT', `reconcile of ${key} exceeded ${timeoutMs} ms`, {
          step: 'reconcile',
          retryable: true,
        })
      },
      stop,
    )
    const started = this.#clock.monotonic()
    let outcome: ReconcileOutcome = 'success'
    try {
      const result = (await o.reconcile(
        { namespace, name },
        { signal: deadline.signal, log, reconcileId },
      )) as ReconcileResult
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
      outcome = failureOutcome(err, timedOut)
      // The throw site, the first time this object fails this way (frames only: no message, no cause).
      const stack = err instanceof Error ? this.#stacks.stackFor(key, err) : undefined
      const where = stack === undefined ? {} : { stack }
      if (outcome === 'terminal_error') {
        this.queue.forget(key)
        log.error('reconcile failed permanently; waiting for the object to change', {
          error: errorMessage(err),
          ...where,
        })
      } else {
        if (!stop.aborted) this.queue.addRateLimited(key)
        log.error(
          outcome === 'panic' ? 'reconcile threw a non-error value' : 'reconcile failed; will retry',
          {
            error: errorMessage(err),
            retries: this.queue.numRequeues(key),
            ...(outcome === 'timeout' ? { timeoutMs } : {}),
            ...where,
          },
        )
      }
    } finally {
      deadline.dispose()
      this.#observer?.onReconcile?.(outcome, (this.#clock.monotonic() - started) / 1000)
    }
  }
}

/**
 * The outcome of a reconcile that threw: terminal (the reconciler said so) before timeout (the
 * deadline had aborted its signal) before panic (a non-Error was thrown) before a plain error.
 */
function failureOutcome(err: unknown, timedOut: boolean): ReconcileOutcome {
  if (isTerminalError(err)) return 'terminal_error'
  if (timedOut) return 'timeout'
  return err instanceof Error ? 'error' : 'panic'
}
