/**
 * @module metrics — the hook interface a work queue reports to, and the per-item bookkeeping behind it.
 *
 * The queue never talks to Prometheus. It calls a {@link QueueMetrics} sink with plain numbers; the
 * controller layer implements the sink with whatever exporter it ships, under the metric names in
 * {@link WORKQUEUE_METRIC_NAMES} (controller-runtime's). Semantics follow client-go
 * `util/workqueue/metrics.go`; the two in-flight gauges are computed on demand through a probe
 * instead of client-go's 500 ms ticker, so an idle queue costs nothing.
 */
import { type Clock, realClock } from '../core/clock.ts'

/**
 * The metric names controller-runtime registers for every controller's queue
 * (controller-runtime `pkg/metrics/workqueue.go`; labels `name` and `controller`, plus `priority` on
 * `workqueue_depth` with the priority queue). Histogram buckets there are
 * `ExponentialBuckets(10e-9, 10, 12)`, i.e. 10 ns … 1000 s.
 *
 * @example
 * registry.gauge({ name: WORKQUEUE_METRIC_NAMES.depth, labelNames: ['name', 'controller'] })
 */
export const WORKQUEUE_METRIC_NAMES = {
  /** Gauge: items waiting (including items re-added while processing), {@link QueueMetrics.incDepth}. */
  depth: 'workqueue_depth',
  /** Counter: non-deduplicated adds, {@link QueueMetrics.incAdds}. */
  adds: 'workqueue_adds_total',
  /** Histogram, seconds: first add → get, {@link QueueMetrics.observeQueueDuration}. */
  queueDuration: 'workqueue_queue_duration_seconds',
  /** Histogram, seconds: get → done, {@link QueueMetrics.observeWorkDuration}. */
  workDuration: 'workqueue_work_duration_seconds',
  /** Gauge, seconds: sum of the ages of all in-flight items, {@link InFlightWork.unfinishedWorkSeconds}. */
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  /** Gauge, seconds: age of the oldest in-flight item, {@link InFlightWork.longestRunningProcessorSeconds}. */
  longestRunningProcessor: 'workqueue_longest_running_processor_seconds',
  /** Counter: every `addAfter` / `addRateLimited` accepted, {@link QueueMetrics.incRetries}. */
  retries: 'workqueue_retries_total',
} as const

/** One of the names in {@link WORKQUEUE_METRIC_NAMES}. */
export type WorkqueueMetricName = (typeof WORKQUEUE_METRIC_NAMES)[keyof typeof WORKQUEUE_METRIC_NAMES]

/** The two gauges about work handed out and not yet done, computed when read. */
export interface InFlightWork {
  /** `workqueue_unfinished_work_seconds`: Σ (now − get time) over items being processed. */
  unfinishedWorkSeconds: number
  /** `workqueue_longest_running_processor_seconds`: max (now − get time), 0 when idle. */
  longestRunningProcessorSeconds: number
}

/** Reads {@link InFlightWork} at the moment of the call (e.g. at scrape time). */
export type InFlightProbe = () => InFlightWork

/**
 * The sink a queue reports to: one queue, one sink (bind the queue's name when creating it).
 *
 * Guarantees (from the queue): `incDepth`/`incAdds` once per add that is not deduplicated — even when
 * the item is being processed and is only parked until `done`; `decDepth` and one
 * `observeQueueDuration` per hand-out by `get`; one `observeWorkDuration` per `done` of a handed-out
 * item; `incRetries` per accepted `addAfter` (including delays ≤ 0, as client-go); `setInFlightProbe`
 * at most once, when the queue is created. Durations are seconds on the queue's clock (monotonic).
 *
 * Does not guarantee: an exception from a sink reaches anyone — it is swallowed, so that metrics can
 * never leave the queue half-updated; silence after shutdown (`done` of in-flight items still reports).
 *
 * @example
 * const sink: QueueMetrics = {
 *   incDepth: () => depth.inc({ name }), decDepth: () => depth.dec({ name }),
 *   incAdds: () => adds.inc({ name }), incRetries: () => retries.inc({ name }),
 *   observeQueueDuration: (s) => queueDuration.observe({ name }, s),
 *   observeWorkDuration: (s) => workDuration.observe({ name }, s),
 *   setInFlightProbe: (probe) => { readInFlight = probe },
 * }
 * const q = createRateLimitingQueue<string>({ metrics: sink })
 */
export interface QueueMetrics {
  /** `workqueue_depth` += 1. */
  incDepth(): void
  /** `workqueue_depth` −= 1. */
  decDepth(): void
  /** `workqueue_adds_total` += 1. */
  incAdds(): void
  /** Observe into `workqueue_queue_duration_seconds`. */
  observeQueueDuration(seconds: number): void
  /** Observe into `workqueue_work_duration_seconds`. */
  observeWorkDuration(seconds: number): void
  /** `workqueue_retries_total` += 1. */
  incRetries(): void
  /** Receives the on-demand reader of the in-flight gauges. Optional: omit it to skip those gauges. */
  setInFlightProbe?(probe: InFlightProbe): void
}

/**
 * Per-item timing behind a {@link QueueMetrics} sink (client-go `defaultQueueMetrics`): remembers when
 * each item was first added and when each in-flight item was handed out. Used by the work queue;
 * exported so that other queue implementations can report identically.
 *
 * Guarantees: memory is proportional to the number of items queued or in flight (entries are deleted
 * on get and on done); an exception thrown by the sink is swallowed.
 *
 * Does not guarantee: anything for calls out of order (a `done` without `get` is ignored).
 *
 * @example
 * const rec = new QueueMetricsRecorder<string>(sink, clock)
 * rec.add('a'); rec.get('a'); rec.done('a')
 */
export class QueueMetricsRecorder<T> {
  readonly #sink: QueueMetrics
  readonly #clock: Clock
  /** First add time (ms, monotonic) of items added and not yet handed out. */
  readonly #addTimes = new Map<T, number>()
  /** Hand-out time (ms, monotonic) of items being processed. */
  readonly #startTimes = new Map<T, number>()

  constructor(sink: QueueMetrics, clock: Clock = realClock) {
    this.#sink = sink
    this.#clock = clock
    sink.setInFlightProbe?.(() => this.inFlight())
  }

  /** A non-deduplicated add of `item`. */
  add(item: T): void {
    if (!this.#addTimes.has(item)) this.#addTimes.set(item, this.#clock.monotonic())
    try {
      this.#sink.incAdds()
      this.#sink.incDepth()
    } catch {
      // A sink must not break the queue.
    }
  }

  /** `item` handed out by `get`. */
  get(item: T): void {
    const now = this.#clock.monotonic()
    this.#startTimes.set(item, now)
    const added = this.#addTimes.get(item)
    if (added !== undefined) this.#addTimes.delete(item)
    try {
      this.#sink.decDepth()
      if (added !== undefined) this.#sink.observeQueueDuration((now - added) / 1000)
    } catch {
      // A sink must not break the queue.
    }
  }

  /** `item` finished by `done`. */
  done(item: T): void {
    const started = this.#startTimes.get(item)
    if (started === undefined) return
    this.#startTimes.delete(item)
    try {
      this.#sink.observeWorkDuration((this.#clock.monotonic() - started) / 1000)
    } catch {
      // A sink must not break the queue.
    }
  }

  /** The in-flight gauges now. */
  inFlight(): InFlightWork {
    const now = this.#clock.monotonic()
    let total = 0
    let longest = 0
    for (const started of this.#startTimes.values()) {
      const age = now - started
      total += age
      if (age > longest) longest = age
    }
    return { unfinishedWorkSeconds: total / 1000, longestRunningProcessorSeconds: longest / 1000 }
  }
}
