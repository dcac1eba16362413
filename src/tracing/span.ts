/**
 * @module span — one timed operation of a trace, and the span active in the current async context.
 *
 * The active span travels with the async context (`AsyncLocalStorage`): a controller runs each
 * reconcile inside its span, and the API client and the operators' external clients make their
 * calls children of whatever span is active. Nothing is active when tracing is off, so a call then
 * costs one `getStore()`.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { SpanContext } from './trace-context.ts'

/** An attribute value (OTLP `AnyValue` scalars). */
export type AttributeValue = string | number | boolean

/** Attributes of a span, by OpenTelemetry attribute name. */
export type Attributes = Record<string, AttributeValue>

/** What a span stands for (OTLP `SpanKind`): `client` for an outgoing request, `internal` otherwise. */
export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer'

/** How a span starts. */
export interface StartSpanOptions {
  /** Default `internal`. */
  kind?: SpanKind
  /** The parent (another process's, or a local span's `context`). Absent: a new trace. */
  parent?: SpanContext
  /** Spans this one is related to without being their child (e.g. the write that caused it). */
  links?: readonly SpanContext[]
  /** Initial attributes (copied). */
  attributes?: Attributes
}

/** A finished span, as an exporter receives it. */
export interface SpanData {
  /** What the span did, e.g. `reconcile appservice` or `GET /api/v1/namespaces`. */
  readonly name: string
  /** See {@link SpanKind}. */
  readonly kind: SpanKind
  /** Its trace and span ID and whether it is recorded. */
  readonly context: SpanContext
  /** The parent's span ID; undefined for a root. */
  readonly parentSpanId: string | undefined
  /** See {@link StartSpanOptions.links}. */
  readonly links: readonly SpanContext[]
  /** Its attributes. */
  readonly attributes: Readonly<Attributes>
  /** Start, in milliseconds since the epoch (fractional). */
  readonly startMs: number
  /** End, in milliseconds since the epoch (fractional); 0 until it ended. */
  readonly endMs: number
  /** The error's message when it failed (OTLP status `ERROR`); undefined otherwise. */
  readonly error: string | undefined
}

/**
 * A started span. Only sampled spans are recorded (kept and exported); an unsampled one still has
 * IDs, so its context travels and its children are consistently unsampled.
 */
export interface Span extends SpanData {
  /** The `traceparent` header value that makes a callee's spans its children. */
  readonly traceparent: string
  /** Sets an attribute; returns the span. */
  set(key: string, value: AttributeValue): this
  /** Marks the span failed with the message of `error` (never its cause). */
  fail(error: unknown): void
  /** Ends the span (later calls do nothing); a sampled span is then queued for export. */
  end(): void
  /** Starts a child span on the same tracer. */
  child(name: string, options?: Omit<StartSpanOptions, 'parent'>): Span
}

const active = new AsyncLocalStorage<Span>()

/** The span of the current async context (a reconcile's, a call's); undefined when there is none. */
export function activeSpan(): Span | undefined {
  return active.getStore()
}

/** Runs `fn` with `span` active in its async context (and everything `fn` starts). */
export function withSpan<T>(span: Span, fn: () => T): T {
  return active.run(span, fn)
}
