/**
 * @module controller — informer events in, keys through a rate-limited queue, reconciles out.
 */
import { randomBytes } from 'node:crypto'
import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import { forbiddenPermission, formatRbacPermission } from '../client/forbidden-permission.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { deadlineSignal } from '../core/deadline.ts'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { quoteInput } from '../core/quote-input.ts'
import { TokenBucket } from '../core/token-bucket.ts'
import { type KubeObject, splitObjectKey } from '../core/types.ts'
import { defaultLogger } from '../logging/logger.ts'
import type { ControllerObserver, ReconcileOutcome } from '../metrics/controller-observer.ts'
import { DeferredQueueMetrics } from '../queue/deferred-metrics.ts'
import type { QueueMetrics } from '../queue/metrics.ts'
import {
  DEFAULT_BUCKET_BURST,
  DEFAULT_BUCKET_QPS,
  DEFAULT_ITEM_MAX_DELAY_MS,
  type RateLimiter,
} from '../queue/rate-limiter.ts'
import { createRateLimitingQueue, type RateLimitingQueue } from '../queue/rate-limiting-queue.ts'
import type { ParkedKeyInfo } from '../server/parked-keys-view.ts'
import { type Span, withSpan } from '../tracing/span.ts'
import { type SpanContext, writerContext } from '../tracing/trace-context.ts'
import type { Tracer } from '../tracing/tracer.ts'
import { ErrorStacks } from './error-stacks.ts'
import { MAX_PARKED_MESSAGE_CHARS, ParkedKeys, rearms } from './parked-keys.ts'
import { allOf, type Predicate } from './predicates.ts'
import {
  isTerminalError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  requestKey,
} from './reconciler.ts'
import {
  classifyError,
  defaultRetryPolicy,
  type ErrorClass,
  type FailureHistory,
  type ParkReason,
  type RetryPolicy,
} from './retry-policy.ts'

export type { ControllerObserver, ReconcileOutcome } from '../metrics/controller-observer.ts'

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
  /** The tracer of reconciles (see {@link ControllerOptions.tracer}), used when the controller has none. */
  tracer?: Tracer
}

/** What {@link ControllerOptions.onFailure} is told about a failed reconcile. */
export interface FailureReport {
  /** The class of the error. */
  errorClass: ErrorClass
  /** Consecutive failures of the key, this one included. */
  attempts: number
  /** The error's message, quoted and cut to `MAX_PARKED_MESSAGE_CHARS`. */
  message: string
  /** For `forbidden`: the RBAC rule to grant, on one line (`Role in namespace "shop": - apiGroups: …`). */
  missingPermission?: string
  /** Set when the key was parked: why. */
  parked?: ParkReason
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
  /**
   * The member cluster whose objects the sources deliver (see `ClusterSet`): every request carries
   * it and every log line names it. Absent: the home cluster, requests without `cluster`.
   */
  cluster?: string
  /** Workers; one key is never reconciled by two at once. Default {@link DEFAULT_MAX_CONCURRENT_RECONCILES}. */
  maxConcurrentReconciles?: number
  /**
   * Abort a reconcile's signal after this long (ms, on `clock`); the worker still waits for it to
   * return, and a failure after that counts as a `timeout`. 0 or absent = none.
   */
  reconcileTimeoutMs?: number
  /** Delay of `{ requeue: true }` results. Default: `defaultControllerRateLimiter` (per-item 5 ms → 1000 s, max'd with 10 qps burst 100). */
  rateLimiter?: RateLimiter<string>
  /**
   * What a failure does: retry after a delay, or park the key. Default {@link defaultRetryPolicy};
   * `clientGoRetryPolicy()` is controller-runtime's behaviour. Every retry is also spread by one
   * bucket of 10 qps, burst 100 (client-go's overall limit).
   */
  retryPolicy?: RetryPolicy
  /** Cap of parked keys. Default `DEFAULT_MAX_PARKED_KEYS`. */
  maxParkedKeys?: number
  /**
   * Told, before the key is released, of a failure classified `forbidden` and of a key being parked
   * (not of a {@link TerminalError}: its reconciler reports it): the place to set a condition and
   * record an event. Awaited; what it throws is logged, never retried.
   */
  onFailure?: (request: ReconcileRequest, report: FailureReport, context: ReconcileContext) => Promise<void>
  /** Workqueue metrics. Absent: a manager's {@link Controller.instrument} may provide them. */
  queueMetrics?: QueueMetrics
  /** Reconcile metrics. Absent: a manager's {@link Controller.instrument} may provide them. */
  observer?: ControllerObserver
  /** Time source of the queue, the reconcile timeout and the durations reported. Default: real time. */
  clock?: Clock
  /** Default {@link defaultLogger}: warnings and errors as JSON lines on stderr. */
  logger?: Logger
  /**
   * Traces every reconcile: a span `reconcile <name>` (attributes `edgeop.controller`,
   * `edgeop.object`, `edgeop.reconcile_id`, `edgeop.result`) active while it runs, so its API calls
   * are child spans carrying `traceparent`; its log lines get `trace_id` and `span_id`; an event whose
   * object carries a new `edgeop.io/traceparent` annotation links the next reconcile of its key to
   * that span. Absent: a manager's {@link Controller.instrument} may provide one; else no tracing.
   */
  tracer?: Tracer
}

/**
 * A controller (controller-runtime's contract).
 *
 * Guarantees: events only enqueue keys (deduplicated while waiting); a key is never
 * reconciled by two workers at once, and an event during its reconcile queues it
 * again afterwards; workers start only after every handler has processed its
 * informer's initial list (awaited, not polled); a failure goes to the retry policy (default
 * {@link defaultRetryPolicy}: by error class, with jitter), which retries it after a delay (never
 * faster than the overall 10 qps bucket) or parks it; a parked key is not reconciled, and shows in
 * {@link Controller.parked}, until a change of its object re-arms it (`rearms`: a new generation,
 * deletion, a new `edgeop.io/retry-now` annotation) or {@link Controller.retryParked}; a
 * {@link TerminalError} parks at once; `requeueAfterMs` polls; a thrown non-Error is contained and counted as a panic; a reconcile
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
  readonly #policy: RetryPolicy
  readonly #failures = new Map<string, FailureHistory & { lastFailureAt: number }>()
  readonly #parked: ParkedKeys
  /** Spreads every failure retry (client-go's overall bucket). */
  readonly #retryBucket: TokenBucket
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
    this.#clock = options.clock ?? realClock
    this.#log = (options.logger ?? defaultLogger()).child({
      controller: options.name,
      ...(options.cluster ? { cluster: options.cluster } : {}),
    })
    this.maxConcurrentReconciles = Math.max(
      1,
      options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES,
    )
    this.#observer = options.observer
    this.#tracer = options.tracer
    this.#policy = options.retryPolicy ?? defaultRetryPolicy()
    this.#parked = new ParkedKeys(options.name, options.maxParkedKeys)
    this.#retryBucket = new TokenBucket({
      qps: DEFAULT_BUCKET_QPS,
      burst: DEFAULT_BUCKET_BURST,
      clock: this.#clock,
    })
    this.#deferredQueueMetrics = options.queueMetrics ? undefined : new DeferredQueueMetrics()
    this.queue = createRateLimitingQueue<string>({
      clock: this.#clock,
      metrics: options.queueMetrics ?? this.#deferredQueueMetrics,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
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
    this.#register(
      o.for.source as EventSource,
      o.for.predicates as Predicate[] | undefined,
      (obj) => [own(obj)],
      (old, obj) => {
        // A change that re-arms: it reaches a parked key whatever the predicates say.
        const key = own(obj)
        if (!rearms(old, obj)) return this.#parked.has(key)
        if (this.#processing.has(key)) this.#processing.set(key, true)
        return this.retryParked(key)
      },
    )
    for (const w of o.owns ?? []) this.#register(w.source, w.predicates, (obj) => [this.#ownerKey(obj)])
    for (const w of o.watches ?? [])
      this.#register(w.source, w.predicates, (obj) => w.map(obj).map(requestKey))
  }

  /**
   * Registers a handler mapping each event's object(s) to keys, after predicates; a parked key is
   * not enqueued. `primary` sees each primary event first and returns true when it handled it.
   */
  #register(
    source: EventSource,
    predicates: Predicate[] | undefined,
    keys: (obj: KubeObject) => (string | undefined)[],
    primary?: (old: KubeObject | undefined, obj: KubeObject) => boolean,
  ): void {
    const preds = predicates ?? []
    const enqueue = (k: string | undefined, writer?: SpanContext): void => {
      if (k === undefined || this.#parked.has(k)) return
      if (writer) this.#links.set(k, writer)
      this.queue.add(k)
    }
    const add = (obj: KubeObject, old?: KubeObject): void => {
      const writer = this.#tracer && writerContext(obj, old)
      for (const k of keys(obj)) enqueue(k, writer)
    }
    this.#registrations.push(
      source.addEventHandler({
        onAdd: (obj) => {
          if (!primary?.(undefined, obj) && allOf(preds, 'create', obj)) add(obj)
        },
        onUpdate: (old, obj) => {
          if (primary?.(old, obj) || !allOf(preds, 'update', old, obj)) return
          add(obj, old)
          // An owner or mapping may have changed: the old one must learn too (controller-runtime).
          for (const k of keys(old)) if (!keys(obj).includes(k)) enqueue(k)
        },
        onDelete: (obj) => {
          if (!primary?.(undefined, obj) && allOf(preds, 'delete', obj)) add(obj)
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
    const request: ReconcileRequest = { ...splitObjectKey(key), ...(o.cluster ? { cluster: o.cluster } : {}) }
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
      this.#stacks.forget(key)
      this.#failures.delete(key)
    } catch (err) {
      outcome = failureOutcome(err, timedOut)
      span?.fail(err)
      // The throw site, the first time this object fails this way (frames only: no message, no cause).
      const stack = err instanceof Error ? this.#stacks.stackFor(key, err) : undefined
      const where = stack === undefined ? {} : { stack }
      const fields = { error: errorMessage(err), ...(outcome === 'timeout' ? { timeoutMs } : {}), ...where }
      await this.#failed(key, err, stop, request, context, fields)
    } finally {
      deadline.dispose()
      this.#observer?.onReconcile?.(outcome, (this.#clock.monotonic() - started) / 1000)
      span?.set('edgeop.result', outcome).end()
    }
  }

  /**
   * A failed reconcile: the policy decides (on the failure history, at `clock.now()`), the key is
   * retried after the decided delay (and the overall bucket) or parked, `onFailure` is told, the
   * failure is logged.
   */
  async #failed(
    key: string,
    err: unknown,
    stop: AbortSignal,
    request: ReconcileRequest,
    context: ReconcileContext,
    fields: Record<string, unknown>,
  ): Promise<void> {
    const now = this.#clock.now()
    const h = this.#failures.get(key) ?? { attempts: 0, firstFailureAt: now, lastFailureAt: now }
    h.attempts++
    h.lastFailureAt = now
    this.#failures.set(key, h)
    const errorClass = classifyError(err)
    const decision = this.#policy.decide(err, h, now)
    const message = quoteInput(errorMessage(err), MAX_PARKED_MESSAGE_CHARS)
    const log = context.log
    const base = { ...fields, errorClass, attempts: h.attempts }
    if (stop.aborted) return log.error('reconcile failed; stopping', base)
    // The object changed during this reconcile: the queue has it again, so it must not park.
    const changed = this.#processing.get(key) === true
    let parked: ParkReason | undefined
    if (decision.action === 'park' && !changed) {
      const stored = this.#parked.park({ key, reason: decision.reason, errorClass, lastError: message, ...h })
      if (stored) {
        parked = decision.reason
        this.#failures.delete(key)
        this.#observer?.onParkedKeys?.(parked, this.#parked.count(parked))
        log.error('reconcile failed; parked until the object changes', { ...base, reason: parked })
      } else {
        this.#observer?.onParkOverflow?.()
        if (decision.reason !== 'no_retry') this.queue.addAfter(key, DEFAULT_ITEM_MAX_DELAY_MS)
        log.error('reconcile failed; cannot park: cap reached', { ...base, reason: decision.reason })
      }
    } else if (decision.action === 'retry') {
      const delayMs = Math.max(decision.delayMs, this.#retryBucket.reserve())
      this.queue.addAfter(key, delayMs)
      log.error(
        errorClass === 'unknown' && !(err instanceof Error)
          ? 'reconcile threw a non-error value'
          : 'reconcile failed; will retry',
        { ...base, retryInMs: Math.round(delayMs) },
      )
    }
    const permission = errorClass === 'forbidden' ? forbiddenPermission(err) : undefined
    const hook = this.#options.onFailure
    if (!hook || errorClass === 'terminal' || (errorClass !== 'forbidden' && !parked)) return
    try {
      await hook(
        request,
        {
          errorClass,
          attempts: h.attempts,
          message,
          ...(permission ? { missingPermission: formatRbacPermission(permission) } : {}),
          ...(parked ? { parked } : {}),
        },
        context,
      )
    } catch (hookErr) {
      log.error('onFailure hook failed', { error: errorMessage(hookErr) })
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
