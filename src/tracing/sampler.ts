/**
 * @module sampler — which traces are recorded: OpenTelemetry's samplers `always_on`, `always_off`,
 * `traceidratio` and their `parentbased_*` forms, as one pure decision.
 */
import type { SpanContext } from './trace-context.ts'

/** A sampler: a ratio of new traces, and whether a span with a parent follows the parent's decision. */
export interface Sampler {
  /** Share of root spans (and, without `parentBased`, of all spans) recorded, 0–1. */
  readonly ratio: number
  /** A span with a parent is recorded exactly when the parent was (`parentbased_*`). */
  readonly parentBased: boolean
}

/**
 * OpenTelemetry's default sampler, `parentbased_always_on`: every new trace, and every trace a
 * caller recorded.
 */
export const DEFAULT_SAMPLER: Sampler = { ratio: 1, parentBased: true }

/**
 * Whether a span of `traceId` is recorded. A root is recorded when the trace ID's last 13 hex digits
 * (52 random bits, exact in a double) are below `ratio × 2^52`: the same trace ID gets the same
 * answer in every process that uses the same ratio.
 */
export function shouldSample(sampler: Sampler, traceId: string, parent?: SpanContext): boolean {
  if (parent && sampler.parentBased) return parent.sampled
  return Number.parseInt(traceId.slice(19), 16) < sampler.ratio * 2 ** 52
}
