/**
 * @module trace-context — W3C Trace Context: the `traceparent` header, and the annotation by which an
 * object names the trace that wrote it.
 *
 * `traceparent` is `<version>-<trace-id>-<parent-id>-<flags>` in lower-case hex
 * (https://www.w3.org/TR/trace-context/#traceparent-header): version `00` has exactly these four
 * fields, a later version may append more (read as `00`), `ff` is invalid, and an all-zero trace or
 * parent ID is invalid. Bit 0 of the flags is `sampled`.
 */
import type { KubeObject } from '../core/types.ts'

/** The identity of a span as it travels between processes. */
export interface SpanContext {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string
  /** 16 lower-case hex digits, not all zero. */
  readonly spanId: string
  /** Whether the trace is recorded (the `sampled` flag). */
  readonly sampled: boolean
}

/**
 * The annotation by which an object names the trace that wrote it: a `traceparent` value. A reconcile
 * started by an event whose object carries a new value of it links to that span (a link, not a
 * parent: the reconcile runs later, and once for many writes). Whoever writes the object sets it.
 */
export const TRACEPARENT_ANNOTATION = 'edgeop.io/traceparent'

const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/

/** Parses a `traceparent` value; undefined when it is absent or invalid. */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  const m = value === undefined ? null : TRACEPARENT.exec(value.trim())
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5]) || !/[^0]/.test(m[2]!) || !/[^0]/.test(m[3]!))
    return undefined
  return { traceId: m[2]!, spanId: m[3]!, sampled: (Number.parseInt(m[4]!, 16) & 1) === 1 }
}

/** The `traceparent` value (version `00`) of `context`. */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-0${context.sampled ? 1 : 0}`
}

/**
 * The writer's span named by `obj`'s {@link TRACEPARENT_ANNOTATION}, unless `old` (the object before
 * this event) carried the same value: an event that did not change it was not that write.
 */
export function writerContext(obj: KubeObject, old?: KubeObject): SpanContext | undefined {
  const value = obj.metadata.annotations?.[TRACEPARENT_ANNOTATION]
  return value === old?.metadata.annotations?.[TRACEPARENT_ANNOTATION] ? undefined : parseTraceparent(value)
}
