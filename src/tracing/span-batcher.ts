/**
 * @module span-batcher — OpenTelemetry's batch span processor: ended spans wait in a bounded queue and
 * go to the exporter in batches, one export at a time, so a reconcile never waits for the collector.
 */
import { type CancelTimer, type Clock, realClock } from '../core/clock.ts'
import type { SpanData } from './span.ts'

/** OpenTelemetry SDK default `OTEL_BSP_MAX_QUEUE_SIZE`: spans waiting at most; more are dropped. */
export const DEFAULT_MAX_QUEUE_SIZE = 2048
/** OpenTelemetry SDK default `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`: spans per export request at most. */
export const DEFAULT_MAX_EXPORT_BATCH_SIZE = 512
/** OpenTelemetry SDK default `OTEL_BSP_SCHEDULE_DELAY` (ms): a span waits at most this long for its batch. */
export const DEFAULT_SCHEDULE_DELAY_MS = 5000

/** Sends one batch; rejects when it was not accepted (the batch is then dropped, not retried). */
export type SpanExporter = (spans: readonly SpanData[]) => Promise<void>

/** Why spans were dropped: the queue was full, or their export failed. */
export type DropReason = 'queue_full' | 'export_failed'

/** Options of {@link SpanBatcher}. */
export interface SpanBatcherOptions {
  /** Default {@link DEFAULT_MAX_QUEUE_SIZE}. */
  maxQueueSize?: number
  /** Default {@link DEFAULT_MAX_EXPORT_BATCH_SIZE}. */
  maxExportBatchSize?: number
  /** Default {@link DEFAULT_SCHEDULE_DELAY_MS}. */
  scheduledDelayMs?: number
  /** Drives the schedule. Default {@link realClock}. */
  clock?: Clock
  /** Told of every drop (e.g. a counter); must not throw. */
  onDrop?: (count: number, reason: DropReason, error?: unknown) => void
  /** Told after every successful export (e.g. to log a recovery); must not throw. */
  onExport?: (count: number) => void
}

/** Counts of a {@link SpanBatcher}. */
export interface SpanBatcherStats {
  /** Waiting now. */
  queued: number
  /** Accepted by the exporter. */
  exported: number
  /** Dropped: the queue was full, or their export failed (`onDrop` is told which). */
  dropped: number
}

/**
 * The queue. Guarantees: at most `maxQueueSize` spans wait (a span beyond is dropped and counted,
 * the queue never grows); a span waits at most `scheduledDelayMs` plus the exports before it; a full
 * batch is exported at once; exports run one at a time, in order; {@link flush} exports everything
 * queued before it resolves; after {@link shutdown} spans are dropped.
 */
export class SpanBatcher {
  readonly #export: SpanExporter
  readonly #o: SpanBatcherOptions
  readonly #max: number
  readonly #batch: number
  #queue: SpanData[] = []
  #timer: CancelTimer | undefined
  #chain: Promise<void> = Promise.resolve()
  #closed = false
  readonly #stats: SpanBatcherStats = { queued: 0, exported: 0, dropped: 0 }

  /** Starts nothing until the first span. */
  constructor(exporter: SpanExporter, options: SpanBatcherOptions = {}) {
    this.#export = exporter
    this.#o = options
    this.#max = options.maxQueueSize ?? DEFAULT_MAX_QUEUE_SIZE
    this.#batch = Math.min(this.#max, options.maxExportBatchSize ?? DEFAULT_MAX_EXPORT_BATCH_SIZE)
  }

  /** Queues an ended span, or drops it when the queue is full or shut down. */
  add(span: SpanData): void {
    const q = this.#queue
    if (this.#closed || q.length >= this.#max) this.#dropped(1, 'queue_full')
    else if (q.push(span) % this.#batch === 0) void this.flush()
    else
      this.#timer ??= (this.#o.clock ?? realClock).setTimer(
        () => void this.flush(),
        this.#o.scheduledDelayMs ?? DEFAULT_SCHEDULE_DELAY_MS,
      )
  }

  /** Exports everything queued now (after the exports already running); never rejects. */
  flush(): Promise<void> {
    this.#timer?.()
    this.#timer = undefined
    this.#chain = this.#chain.then(async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#batch)
        try {
          await this.#export(batch)
          this.#stats.exported += batch.length
          this.#o.onExport?.(batch.length)
        } catch (err) {
          this.#dropped(batch.length, 'export_failed', err)
        }
      }
    })
    return this.#chain
  }

  /** Exports what is queued and refuses spans from now on. */
  shutdown(): Promise<void> {
    this.#closed = true
    return this.flush()
  }

  /** The counts so far. */
  stats(): SpanBatcherStats {
    return { ...this.#stats, queued: this.#queue.length }
  }

  #dropped(count: number, reason: DropReason, error?: unknown): void {
    this.#stats.dropped += count
    this.#o.onDrop?.(count, reason, error)
  }
}
