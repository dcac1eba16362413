/**
 * @module controller — informer events in, keys through a rate-limited queue, reconciles out: the
 * controller's workers (its watches are in watches.ts, its failures in failure-handler.ts).
 */
import { randomBytes } from 'node:crypto'
import type { HandlerRegistration } from '../cache/listener.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { deadlineSignal } from '../core/deadline.ts'
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { type KubeObject, splitObjectKey } from '../core/types.ts'
import { defaultLogger } from '../logging/logger.ts'
import type { ControllerObserver, ReconcileOutcome } from '../metrics/controller-observer.ts'
import { DeferredQueueMetrics } from '../queue/deferred-metrics.ts'
import { createRateLimitingQueue, type RateLimitingQueue } from '../queue/rate-limiting-queue.ts'
import type { ParkedKeyInfo } from '../server/parked-keys-view.ts'
import { type Span, withSpan } from '../tracing/span.ts'
import { type SpanContext, writerContext } from '../tracing/trace-context.ts'
import type { Tracer } from '../tracing/tracer.ts'
import {
  type ControllerInstrumentation,
  type ControllerOptions,
  DEFAULT_MAX_CONCURRENT_RECONCILES,
} from './controller-options.ts'
import { FailureHandler, failureOutcome } from './failure-handler.ts'
import { ParkedKeys, type ParkedRecord, rearms, recordedPark, sameRecord } from './parked-keys.ts'
import type { Predicate } from './predicates.ts'
import {
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  requestKey,
} from './reconciler.ts'
import { defaultRetryPolicy } from './retry-policy.ts'
import {
  type EventSource,
  type KeyMapping,
  type KeySink,
  keyHandler,
  ownerKey,
  type PrimaryWatch,
  primaryIdentity,
  primaryKey,
} from './watches.ts'

export type { ControllerObserver, ReconcileOutcome } from '../metrics/controller-observer.ts'

/**
 * A controller (controller-runtime's contract).
 *
 * Guarantees: events only enqueue keys (deduplicated while waiting); a key is never
 * reconciled by two workers at once, and an event during its reconcile queues it
 * again afterwards; workers start only after every handler has processed its
 * informer's initial list (awaited, not polled) of the server's state (`synced`; with
 * `actOnRestored`, a restored cache snapshot is enough); a failure goes to the retry policy (default
 * {@link defaultRetryPolicy}: by error class, with jitter), which retries it after a delay (never
 * faster than the overall 10 qps bucket) or parks it; a parked key is not reconciled, and shows in
 * {@link Controller.parked}, until a change of its object re-arms it (`rearms`: a new generation,
 * deletion, a new `edgeop.io/retry-now` annotation), any change (not a resync) of an owned or mapped
 * object that maps to its key (a child deleted, a source relabelled), or {@link Controller.retryParked}; a
 * {@link TerminalError} parks at once; a failure of an object being deleted while finalizers hold it
 * never parks: it retries at most `FINALIZER_RETRY_INTERVAL_MS` apart, forever, and `onFailure` is
 * told how long the deletion has waited; `requeueAfterMs` polls; a thrown non-Error is contained and counted as a panic; a reconcile
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
  readonly #parked: ParkedKeys
  readonly #failures: FailureHandler
  /** Keys whose object is being deleted while finalizers hold it, with the deletion's wall ms. */
  readonly #deleting = new Map<string, number>()
  /** Keys being reconciled, and those of them whose object changed meanwhile (they must not park). */
  readonly #processing = new Map<string, boolean>()
  /** Stands in for workqueue metrics that {@link instrument} may bind later; undefined when given. */
  readonly #deferredQueueMetrics: DeferredQueueMetrics | undefined
  #observer: ControllerObserver | undefined
  #tracer: Tracer | undefined
  /** Queued keys whose event named the writer's span (`edgeop.io/traceparent`): their next reconcile links to it. */
  readonly #links = new Map<string, SpanContext>()
  #active = 0
  #started = false

  /** The primary objects' source (`for.source`); a manager reports on its cache when it has one. */
  get source(): EventSource<T> {
    return this.#options.for.source
  }

  /** Wires the event handlers at once; starts nothing until {@link run}. */
  constructor(options: ControllerOptions<T>) {
    this.name = options.name
    this.#options = options
    // Owned objects map to the primary's kind: a `for` that cannot name it is refused here, not at run.
    if (options.owns?.length) primaryIdentity(options.name, options.for as PrimaryWatch)
    this.#clock = options.clock ?? realClock
    this.#log = (options.logger ?? defaultLogger()).child({
      controller: options.name,
      ...definedProps({ cluster: options.cluster || undefined }),
    })
    this.maxConcurrentReconciles = Math.max(
      1,
      options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES,
    )
    this.#observer = options.observer
    this.#tracer = options.tracer
    this.#parked = new ParkedKeys(options.name, options.maxParkedKeys)
    this.#deferredQueueMetrics = options.queueMetrics ? undefined : new DeferredQueueMetrics()
    this.queue = createRateLimitingQueue<string>({
      clock: this.#clock,
      metrics: options.queueMetrics ?? this.#deferredQueueMetrics,
      rateLimiter: options.rateLimiter,
    })
    this.#failures = new FailureHandler({
      queue: this.queue,
      parked: this.#parked,
      processing: this.#processing,
      policy: options.retryPolicy ?? defaultRetryPolicy(),
      clock: this.#clock,
      deletingSince: (key) => this.#deleting.get(key),
      observer: () => this.#observer,
      onFailure: options.onFailure,
    })
    this.#wire()
  }

  /**
   * Gives the controller the metrics hooks (and the tracer) it has none of (neither in its options
   * nor from an earlier call): each factory is called at most once. Hooks given in the options win. Work queued
   * before is accounted for (depth, adds, retries). Throws `EDGEOP_ERR_INVALID` once {@link run}
   * has started. The manager calls this for every controller it is given.
   */
  instrument(hooks: ControllerInstrumentation): void {
    if (this.#started)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `controller ${this.name} is already running`, {
        step: 'instrument controller',
      })
    if (hooks.observer && !this.#observer) this.#observer = hooks.observer()
    this.#tracer ??= hooks.tracer
    const deferred = this.#deferredQueueMetrics
    if (hooks.queueMetrics && deferred && !deferred.bound) deferred.bind(hooks.queueMetrics())
  }

  /** Enqueues a request (e.g. from a timer or an external system's callback). */
  enqueue(request: ReconcileRequest): void {
    this.queue.add(requestKey(request))
  }

  /** The keys this controller stopped retrying (the dead-letter view). */
  parked(): ParkedKeyInfo[] {
    return this.#parked.list()
  }

  /** Re-arms a parked key: it is reconciled again at once. False when it was not parked. */
  retryParked(key: string): boolean {
    const e = this.#parked.unpark(key)
    if (!e) return false
    this.#observer?.onParkedKeys?.(e.reason, this.#parked.count(e.reason))
    this.queue.add(key)
    return true
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
      // Says on which state the workers start: an opted-in controller may act on a restored snapshot.
      this.#log.info('starting workers', {
        workers,
        caches: this.#options.actOnRestored ? 'restored or synced' : 'synced',
      })
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
    const sink: KeySink = {
      enqueue: (k, writer, rearm) => {
        if (k === undefined) return
        // A change that may be what a failure waited for: a key in flight must not park on it.
        if (rearm && this.#processing.has(k)) this.#processing.set(k, true)
        if (this.#parked.has(k)) {
          if (rearm) this.retryParked(k)
          return
        }
        if (writer) this.#links.set(k, writer)
        this.queue.add(k)
      },
      writer: (obj, old) => (this.#tracer ? writerContext(obj, old) : undefined),
    }
    const watch = (source: EventSource, mapping: KeyMapping): void => {
      this.#registrations.push(
        source.addEventHandler(keyHandler(mapping, sink), definedProps({ acceptRestored: o.actOnRestored })),
      )
    }
    // The primary key, parking (rearms), owner keys and the writer's span read metadata only; a
    // park recorded on the object (`parkedFrom`) is read from its status, so that needs it decoded.
    watch(o.for.source as EventSource, {
      predicates: o.for.predicates as Predicate[] | undefined,
      ...(o.parkedFrom ? {} : { reads: 'metadata' as const }),
      keys: (obj) => [primaryKey(obj)],
      primary: (old, obj, deleted) => {
        const key = primaryKey(obj)
        const since = obj.metadata.deletionTimestamp
        if (!deleted && since && obj.metadata.finalizers?.length) this.#deleting.set(key, Date.parse(since))
        else this.#deleting.delete(key)
        if (!deleted && this.#recordedPark(old, obj, key)) return true
        // A change that re-arms: it reaches a parked key whatever the predicates say.
        if (!rearms(old, obj)) return this.#parked.has(key)
        if (this.#processing.has(key)) this.#processing.set(key, true)
        return this.retryParked(key)
      },
    })
    const primary = o.owns?.length ? primaryIdentity(o.name, o.for as PrimaryWatch) : undefined
    for (const w of o.owns ?? [])
      watch(w.source, {
        predicates: w.predicates,
        reads: 'metadata',
        keys: (obj) => [ownerKey(primary!, obj)],
        rearms: true,
      })
    for (const w of o.watches ?? [])
      watch(w.source, {
        predicates: w.predicates,
        reads: w.reads,
        keys: (obj) => w.map(obj).map(requestKey),
        rearms: true,
      })
  }

  /**
   * The object records a park this controller has not seen (a restart's initial list, another
   * replica's park): its key parks here, unreconciled (true). A record that vanished unparks it.
   */
  #recordedPark(old: KubeObject | undefined, obj: KubeObject, key: string): boolean {
    const from = this.#options.parkedFrom as ((o: KubeObject) => ParkedRecord | undefined) | undefined
    if (!from) return false
    const now = from(obj)
    const was = old && from(old)
    if (!now) {
      const e = was && this.#parked.unpark(key)
      if (e) this.#observer?.onParkedKeys?.(e.reason, this.#parked.count(e.reason))
      return false
    }
    if ((was && sameRecord(was, now)) || this.#parked.has(key) || this.#processing.has(key)) return false
    if (!this.#parked.park(recordedPark(key, now))) return false
    this.#observer?.onParkedKeys?.(now.reason, this.#parked.count(now.reason))
    this.#log.info('parked, as the object records', { object: key, reason: now.reason })
    return true
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const got = await this.queue.get()
      if (got.shutdown) return
      // Queued before it parked (an event during its last reconcile, a timer): it waits to be re-armed.
      if (this.#parked.has(got.item)) {
        this.queue.done(got.item)
        continue
      }
      this.#active++
      this.#processing.set(got.item, false)
      this.#observer?.onActiveWorkers?.(this.#active)
      try {
        await this.#reconcileOne(got.item, signal)
      } finally {
        this.#processing.delete(got.item)
        this.queue.done(got.item)
        this.#active--
        this.#observer?.onActiveWorkers?.(this.#active)
      }
    }
  }

  /** Reconciles `key`, inside its span when tracing (so that the calls it makes are the span's children). */
  #reconcileOne(key: string, stop: AbortSignal): Promise<void> {
    const reconcileId = randomBytes(8).toString('hex')
    const link = this.#links.get(key)
    this.#links.delete(key)
    const span = this.#tracer?.startSpan(`reconcile ${this.name}`, {
      attributes: {
        'edgeop.controller': this.name,
        'edgeop.object': key,
        'edgeop.reconcile_id': reconcileId,
      },
      ...(link ? { links: [link] } : {}),
    })
    const run = () => this.#reconcile(key, stop, reconcileId, span)
    return span ? withSpan(span, run) : run()
  }

  async #reconcile(
    key: string,
    stop: AbortSignal,
    reconcileId: string,
    span: Span | undefined,
  ): Promise<void> {
    const o = this.#options
    const request: ReconcileRequest = {
      ...splitObjectKey(key),
      ...definedProps({ cluster: o.cluster || undefined }),
    }
    const log = this.#log.child({
      object: key,
      reconcileID: reconcileId,
      ...(span ? { trace_id: span.context.traceId, span_id: span.context.spanId } : {}),
    })
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
    const context: ReconcileContext = { signal: deadline.signal, log, reconcileId }
    try {
      const result = (await o.reconcile(request, context)) as ReconcileResult
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
      this.#failures.succeeded(key)
    } catch (err) {
      outcome = failureOutcome(err, timedOut)
      span?.fail(err)
      const fields = outcome === 'timeout' ? { timeoutMs } : {}
      await this.#failures.failed({ key, err, stop, request, context, fields })
    } finally {
      deadline.dispose()
      this.#observer?.onReconcile?.(outcome, (this.#clock.monotonic() - started) / 1000)
      span?.set('edgeop.result', outcome).end()
    }
  }
}
