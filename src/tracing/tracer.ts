/**
 * @module tracer — starts spans, samples them, and hands the recorded ones to a {@link SpanBatcher}.
 *
 * Hand-written rather than the OpenTelemetry SDK: what edgeop needs (W3C propagation, a parent-based
 * ratio sampler, a batch processor, an OTLP/HTTP JSON exporter) is a few hundred lines, a small fraction
 * of what the SDK and its OTLP exporter would add to the artifact (both measured, with their date, in
 * docs/monitoring.md#tracing).
 */
import { randomBytes } from 'node:crypto'
import { errorMessage } from '../core/errors.ts'
import { DEFAULT_SAMPLER, type Sampler, shouldSample } from './sampler.ts'
import type { Attributes, AttributeValue, Span, SpanKind, StartSpanOptions } from './span.ts'
import {
  SpanBatcher,
  type SpanBatcherOptions,
  type SpanBatcherStats,
  type SpanExporter,
} from './span-batcher.ts'
import { formatTraceparent, type SpanContext } from './trace-context.ts'

/** Options of {@link Tracer}: the batcher's, and the sampler. */
export interface TracerOptions extends SpanBatcherOptions {
  /** Default {@link DEFAULT_SAMPLER}. */
  sampler?: Sampler
  /** Wall time in fractional milliseconds since the epoch. Default: `performance.timeOrigin + performance.now()`. */
  now?: () => number
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')

/**
 * A tracer: {@link startSpan} for roots and remote parents, `span.child` below them.
 *
 * Guarantees: IDs are random (`crypto.randomBytes`); the sampling decision is made once per span, at
 * its start; only sampled spans are queued, each once, when they end.
 */
export class Tracer {
  readonly #batcher: SpanBatcher
  readonly #sampler: Sampler
  readonly #now: () => number

  /** Starts nothing until the first span ends. */
  constructor(exporter: SpanExporter, options: TracerOptions = {}) {
    this.#batcher = new SpanBatcher(exporter, options)
    this.#sampler = options.sampler ?? DEFAULT_SAMPLER
    this.#now = options.now ?? (() => performance.timeOrigin + performance.now())
  }

  /** Starts a span: a root, or the child of `options.parent`. */
  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const parent = options.parent
    const traceId = parent?.traceId ?? hex(16)
    const context = { traceId, spanId: hex(8), sampled: shouldSample(this.#sampler, traceId, parent) }
    return new TracedSpan(this, this.#batcher, name, context, options, this.#now)
  }

  /** Exports every span ended so far; never rejects. */
  flush(): Promise<void> {
    return this.#batcher.flush()
  }

  /** Exports what is queued; spans ending later are dropped. */
  shutdown(): Promise<void> {
    return this.#batcher.shutdown()
  }

  /** The batcher's counts (queued, exported, dropped). */
  stats(): SpanBatcherStats {
    return this.#batcher.stats()
  }
}

class TracedSpan implements Span {
  readonly name: string
  readonly kind: SpanKind
  readonly context: SpanContext
  readonly parentSpanId: string | undefined
  readonly links: readonly SpanContext[]
  readonly attributes: Attributes
  readonly startMs: number
  endMs = 0
  error: string | undefined
  readonly #tracer: Tracer
  readonly #batcher: SpanBatcher
  readonly #now: () => number

  constructor(
    tracer: Tracer,
    batcher: SpanBatcher,
    name: string,
    context: SpanContext,
    o: StartSpanOptions,
    now: () => number,
  ) {
    this.#tracer = tracer
    this.#batcher = batcher
    this.#now = now
    this.name = name
    this.kind = o.kind ?? 'internal'
    this.context = context
    this.parentSpanId = o.parent?.spanId
    this.links = o.links ?? []
    this.attributes = { ...o.attributes }
    this.startMs = now()
  }

  get traceparent(): string {
    return formatTraceparent(this.context)
  }

  set(key: string, value: AttributeValue): this {
    this.attributes[key] = value
    return this
  }

  fail(error: unknown): void {
    this.error = errorMessage(error)
  }

  end(): void {
    if (this.endMs) return
    this.endMs = this.#now()
    if (this.context.sampled) this.#batcher.add(this)
  }

  child(name: string, options: Omit<StartSpanOptions, 'parent'> = {}): Span {
    return this.#tracer.startSpan(name, { ...options, parent: this.context })
  }
}
