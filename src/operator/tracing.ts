/**
 * @module tracing — the operator's tracer for `--tracing=otlp`: exporter and sampler from the
 * `OTEL_*` environment, dropped spans counted in `edgeop_tracing_spans_dropped_total{reason}`, export
 * trouble logged once per outage.
 */
import { errorMessage, type Logger } from '../core/index.ts'
import type { MetricsRegistry } from '../metrics/index.ts'
import { otlpConfigFromEnv, otlpHttpExporter, Tracer } from '../tracing/index.ts'

/**
 * A tracer exporting over OTLP/HTTP JSON as `env` configures it (see `otlpConfigFromEnv`), or
 * undefined when `OTEL_SDK_DISABLED=true`. Logs the endpoint (without credentials or query) and the
 * sampler, never the headers. Throws `EDGEOP_ERR_CONFIG` naming a bad variable.
 */
export function otlpTracer(
  env: NodeJS.ProcessEnv,
  service: { name: string; version?: string },
  registry: MetricsRegistry,
  log: Logger,
): Tracer | undefined {
  const config = otlpConfigFromEnv(env, service)
  if (!config) {
    log.info('tracing off: OTEL_SDK_DISABLED=true')
    return undefined
  }
  const dropped = registry.counter({
    name: 'edgeop_tracing_spans_dropped_total',
    help: 'Spans not exported, by reason (queue_full, export_failed).',
    labelNames: ['reason'],
  })
  const u = new URL(config.exporter.url)
  const endpoint = `${u.origin}${u.pathname}`
  let failing = false
  const tracer = new Tracer(otlpHttpExporter(config.exporter), {
    sampler: config.sampler,
    onDrop: (count, reason, error) => {
      dropped.inc({ reason }, count)
      if (error === undefined || failing) return
      failing = true
      log.warn('trace export failed; spans are dropped until it recovers', {
        endpoint,
        error: errorMessage(error),
      })
    },
    onExport: () => {
      if (failing) log.info('trace export recovered', { endpoint })
      failing = false
    },
  })
  log.info('tracing: OTLP/HTTP JSON', { endpoint, ...config.sampler })
  return tracer
}
