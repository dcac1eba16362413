/**
 * @module deferred-metrics — a {@link QueueMetrics} sink whose real sink is chosen after the queue exists.
 *
 * A controller creates its queue when it is constructed, but the process's metrics registry may only
 * reach it later (the manager instruments a controller when it is added). This sink stands in until
 * then and hands over what the gauges and counters must know.
 */
import type { InFlightProbe, QueueMetrics } from './metrics.ts'

/**
 * Forwards to the sink given to {@link bind}; until then, counts.
 *
 * Guarantees: at `bind`, the target receives the depth, adds and retries counted so far (as that many
 * `incDepth`/`decDepth`, `incAdds` and `incRetries` calls) and the queue's in-flight probe, so its
 * gauges and counters read as if it had been there from the start; afterwards every call is forwarded.
 * Does not: replay duration observations made before `bind` (a controller binds before its workers
 * start, when nothing has been handed out yet); bind twice (the second `bind` throws).
 *
 * @example
 * const deferred = new DeferredQueueMetrics()
 * const queue = createRateLimitingQueue<string>({ metrics: deferred })
 * deferred.bind(workqueueMetrics(registry, 'mirror'))
 */
export class DeferredQueueMetrics implements QueueMetrics {
  #target: QueueMetrics | undefined
  #depth = 0
  #adds = 0
  #retries = 0
  #probe: InFlightProbe | undefined

  /** True once a target is bound. */
  get bound(): boolean {
    return this.#target !== undefined
  }

  /** Sends everything from now on to `target`, after replaying the counts so far. */
  bind(target: QueueMetrics): void {
    if (this.#target) throw new Error('queue metrics are already bound')
    this.#target = target
    for (let i = 0; i < this.#adds; i++) target.incAdds()
    for (let i = 0; i < this.#retries; i++) target.incRetries()
    for (let i = 0; i < Math.abs(this.#depth); i++) this.#depth > 0 ? target.incDepth() : target.decDepth()
    if (this.#probe) target.setInFlightProbe?.(this.#probe)
  }

  /** `workqueue_depth` += 1. */
  incDepth(): void {
    if (this.#target) this.#target.incDepth()
    else this.#depth++
  }

  /** `workqueue_depth` −= 1. */
  decDepth(): void {
    if (this.#target) this.#target.decDepth()
    else this.#depth--
  }

  /** `workqueue_adds_total` += 1. */
  incAdds(): void {
    if (this.#target) this.#target.incAdds()
    else this.#adds++
  }

  /** `workqueue_retries_total` += 1. */
  incRetries(): void {
    if (this.#target) this.#target.incRetries()
    else this.#retries++
  }

  /** Forwarded once bound; dropped before. */
  observeQueueDuration(seconds: number): void {
    this.#target?.observeQueueDuration(seconds)
  }

  /** Forwarded once bound; dropped before. */
  observeWorkDuration(seconds: number): void {
    this.#target?.observeWorkDuration(seconds)
  }

  /** Kept for the target, or forwarded at once when bound. */
  setInFlightProbe(probe: InFlightProbe): void {
    this.#probe = probe
    this.#target?.setInFlightProbe?.(probe)
  }
}
