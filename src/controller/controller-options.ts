/**
 * @module controller-options — what a {@link Controller} is built from: its watches, its reconciler, and
 * the knobs of its queue, retries, metrics and tracing.
 */
import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/log.ts'
import type { KubeObject } from '../core/types.ts'
import type { ControllerObserver } from '../metrics/controller-observer.ts'
import type { QueueMetrics } from '../queue/metrics.ts'
import type { RateLimiter } from '../queue/rate-limiter.ts'
import type { Tracer } from '../tracing/tracer.ts'
import type { FailureReport } from './failure-handler.ts'
import type { ParkedRecord } from './parked-keys.ts'
import type { ReconcileContext, ReconcileRequest, Reconciler } from './reconciler.ts'
import type { RetryPolicy } from './retry-policy.ts'
import type { MappedWatch, OwnedWatch, PrimaryWatch } from './watches.ts'

/** controller-runtime `MaxConcurrentReconciles` default: 1. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1

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
  /**
   * Start the workers once the caches hold a restored cache snapshot, before their watches caught up
   * with the server (see the cache's `SyncState`). Default false: a snapshot may be hours old, and a
   * reconcile on it may delete or provision from a state the server no longer has. Opt in only when
   * acting on the last known state beats waiting (the node agent: serve the last known files while
   * the API is away), and make every destructive step check the server first.
   */
  actOnRestored?: boolean
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
  /**
   * Reads back what an object records about its own parking (the condition `onFailure` wrote when its
   * key parked): a record for the object's current generation, or undefined. With it, parked keys
   * survive a restart and a leader change and show on every replica: a key whose object carries a record
   * is parked from the initial list without a reconcile, a record written by another replica parks it
   * here too, and a record that disappears unparks it. Replay is unchanged (a re-arming change, the
   * retry-now annotation, `retryParked`); a record still there after a re-arm does not park it again.
   */
  parkedFrom?(obj: T): ParkedRecord | undefined
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
