/**
 * @module memory-metrics — a {@link QueueMetrics} sink that keeps everything in plain fields, for tests.
 */
import type { InFlightProbe, InFlightWork, QueueMetrics, WorkqueueMetricName } from './metrics.ts'

/**
 * An in-memory {@link QueueMetrics} sink: counters and gauges are numbers, histograms keep every
 * observation.
 *
 * Guarantees: {@link InMemoryQueueMetrics.snapshot} reads every metric under its controller-runtime
 * name; histograms report their observation count there, and their values in the arrays.
 *
 * Does not guarantee: bounded memory — histograms grow with every observation. Use it in tests and
 * debugging, not in a long-running operator.
 *
 * @example
 * const metrics = new InMemoryQueueMetrics()
 * const q = createWorkQueue<string>({ metrics, clock })
 * q.add('a')
 * metrics.depth // 1
 */
export class InMemoryQueueMetrics implements QueueMetrics {
  /** `workqueue_depth`. */
  depth = 0
  /** `workqueue_adds_total`. */
  adds = 0
  /** `workqueue_retries_total`. */
  retries = 0
  /** `workqueue_queue_duration_seconds` observations, in order. */
  readonly queueDurations: number[] = []
  /** `workqueue_work_duration_seconds` observations, in order. */
  readonly workDurations: number[] = []
  #probe: InFlightProbe | undefined

  /** Counts an item added to the queue. */
  incDepth(): void {
    this.depth++
  }

  /** Counts an item handed to a worker. */
  decDepth(): void {
    this.depth--
  }

  /** Counts an add that was not deduplicated. */
  incAdds(): void {
    this.adds++
  }

  /** Records how long an item waited, in seconds. */
  observeQueueDuration(seconds: number): void {
    this.queueDurations.push(seconds)
  }

  /** Records how long an item was processed, in seconds. */
  observeWorkDuration(seconds: number): void {
    this.workDurations.push(seconds)
  }

  /** Counts a rate-limited re-add. */
  incRetries(): void {
    this.retries++
  }

  /** Keeps the queue's probe for {@link InMemoryQueueMetrics.inFlight}. */
  setInFlightProbe(probe: InFlightProbe): void {
    this.#probe = probe
  }

  /** The in-flight gauges now (zeros before a queue registered its probe). */
  inFlight(): InFlightWork {
    return this.#probe?.() ?? { unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 }
  }

  /** Every metric by name; histograms as their observation counts. */
  snapshot(): Record<WorkqueueMetricName, number> {
    const inFlight = this.inFlight()
    return {
      workqueue_depth: this.depth,
      workqueue_adds_total: this.adds,
      workqueue_queue_duration_seconds: this.queueDurations.length,
      workqueue_work_duration_seconds: this.workDurations.length,
      workqueue_unfinished_work_seconds: inFlight.unfinishedWorkSeconds,
      workqueue_longest_running_processor_seconds: inFlight.longestRunningProcessorSeconds,
      workqueue_retries_total: this.retries,
    }
  }
}
