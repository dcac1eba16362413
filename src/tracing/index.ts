/**
 * @module tracing — W3C trace context and OTLP/HTTP export, hand-written and small: spans for
 * reconciles and the requests they make, propagated by `traceparent`.
 */
export {
  DEFAULT_OTLP_ENDPOINT,
  type OtlpConfig,
  otlpConfigFromEnv,
} from './otlp-config.ts'
export {
  DEFAULT_OTLP_TIMEOUT_MS,
  type OtlpExporterOptions,
  otlpHttpExporter,
  otlpJson,
} from './otlp-exporter.ts'
export { DEFAULT_SAMPLER, type Sampler, shouldSample } from './sampler.ts'
export {
  type Attributes,
  type AttributeValue,
  activeSpan,
  type Span,
  type SpanData,
  type SpanKind,
  type StartSpanOptions,
  withSpan,
} from './span.ts'
export {
  DEFAULT_MAX_EXPORT_BATCH_SIZE,
  DEFAULT_MAX_QUEUE_SIZE,
  DEFAULT_SCHEDULE_DELAY_MS,
  type DropReason,
  SpanBatcher,
  type SpanBatcherOptions,
  type SpanBatcherStats,
  type SpanExporter,
} from './span-batcher.ts'
export {
  formatTraceparent,
  parseTraceparent,
  type SpanContext,
  TRACEPARENT_ANNOTATION,
  writerContext,
} from './trace-context.ts'
export { Tracer, type TracerOptions } from './tracer.ts'
