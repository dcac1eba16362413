/**
 * @module otlp-exporter — spans to an OTLP/HTTP receiver (a collector, Jaeger, Tempo) as JSON
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: IDs in hex, times as decimal
 * strings of nanoseconds). Node's built-in `fetch` sends it: no bytes added to the artifact.
 */
import { EdgeopError } from '../core/errors.ts'
import type { Attributes, SpanData } from './span.ts'
import type { SpanExporter } from './span-batcher.ts'

/** OpenTelemetry's default `OTEL_EXPORTER_OTLP_TIMEOUT` (ms): the longest one export request may take. */
export const DEFAULT_OTLP_TIMEOUT_MS = 10_000

/** Options of {@link otlpHttpExporter}. */
export interface OtlpExporterOptions {
  /** Where batches are POSTed, e.g. `http://collector:4318/v1/traces`. */
  url: string
  /** Sent with every request (they may hold a token: never logged). */
  headers?: Record<string, string>
  /** Default {@link DEFAULT_OTLP_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Resource attributes, e.g. `service.name`. */
  resource?: Attributes
}

const KINDS = ['internal', 'server', 'client', 'producer', 'consumer']

const attributes = (a: Readonly<Attributes>) =>
  Object.entries(a).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: v }
            : { doubleValue: v },
  }))

// A double holds today's epoch in nanoseconds to within 256 ns.
const nanos = (ms: number): string => String(Math.round(ms * 1e6))

/** The OTLP JSON body (`ExportTraceServiceRequest`) of `spans` from one resource. */
export function otlpJson(spans: readonly SpanData[], resource: Attributes = {}): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes(resource) },
        scopeSpans: [
          {
            scope: { name: 'edgeop' },
            spans: spans.map((s) => ({
              traceId: s.context.traceId,
              spanId: s.context.spanId,
              parentSpanId: s.parentSpanId,
              name: s.name,
              kind: KINDS.indexOf(s.kind) + 1,
              startTimeUnixNano: nanos(s.startMs),
              endTimeUnixNano: nanos(s.endMs),
              attributes: attributes(s.attributes),
              links: s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              status: s.error === undefined ? {} : { code: 2, message: s.error },
            })),
          },
        ],
      },
    ],
  })
}

/**
 * An exporter POSTing each batch to `options.url`. Rejects with `EDGEOP_ERR_NETWORK` (retryable) when
 * the receiver is unreachable, slower than the timeout or answers other than 2xx; the message names
 * the endpoint without credentials or query, never a header.
 */
export function otlpHttpExporter(options: OtlpExporterOptions): SpanExporter {
  const u = new URL(options.url)
  const step = `OTLP export to ${u.origin}${u.pathname}`
  return async (spans) => {
    let status: number
    try {
      const res = await fetch(u, {
        method: 'POST',
        headers: { ...options.headers, 'content-type': 'application/json' },
        body: otlpJson(spans, options.resource),
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_OTLP_TIMEOUT_MS),
      })
      status = res.status
      await res.arrayBuffer()
    } catch (cause) {
      throw new EdgeopError('EDGEOP_ERR_NETWORK', `${step}: no answer`, { step, retryable: true, cause })
    }
    if (status > 299)
      throw new EdgeopError('EDGEOP_ERR_NETWORK', `${step}: HTTP ${status}`, { step, retryable: true })
  }
}
