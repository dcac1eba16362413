/**
 * @module jaeger — a real Jaeger (v2, `cmd/jaeger` built by build/tools/build-go-tool.sh) for the
 * tracing tests: in-memory storage, the OTLP receivers (HTTP for edgeop, gRPC for the
 * kube-apiserver) and the query API, all on free loopback ports.
 *
 * No Jaeger binary (no Go and nothing cached) is a failure naming the build script, never a skip.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { goToolPathAsync } from '../../build/tools/go-tools.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePorts, LOOPBACK } from '../../src/testing/ports.ts'
import { ManagedProcess } from '../../src/testing/process.ts'

/** A span as Jaeger's query API (`/api/traces`) returns it. */
export interface JaegerSpan {
  traceID: string
  spanID: string
  operationName: string
  references: { refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }[]
  tags: { key: string; type: string; value: unknown }[]
  processID: string
}

/** A trace as Jaeger's query API returns it. */
export interface JaegerTrace {
  traceID: string
  spans: JaegerSpan[]
  processes: Record<string, { serviceName: string }>
}

/** A running Jaeger. */
export interface Jaeger {
  /** OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`), e.g. `http://127.0.0.1:4318`. */
  otlpHttp: string
  /** OTLP/gRPC `host:port`, what a kube-apiserver `TracingConfiguration` names. */
  otlpGrpc: string
  /** The query API's base URL. */
  query: string
  /** The traces of `service` (the query API's default window and a high limit). */
  traces(service: string): Promise<JaegerTrace[]>
  /** Stops the process and removes its directory. */
  stop(): Promise<void>
}

/** The value of a span's tag. */
export const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value

/** The service that wrote `span`. */
export const serviceOf = (trace: JaegerTrace, span: JaegerSpan): string | undefined =>
  trace.processes[span.processID]?.serviceName

/** Starts Jaeger (building it on first use) and waits until its query API answers. */
export async function startJaeger(): Promise<Jaeger> {
  const bin = await goToolPathAsync('jaeger')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-jaeger-'))
  const [http, grpc, query, queryGrpc, health] = await freePorts(5)
  const at = (port: number | undefined) => `${LOOPBACK}:${port}`
  // The collector's own telemetry is off (its default Prometheus port 8888 would collide), and so is
  // the query service tracing itself.
  const config = `
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: ${at(health)}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    enable_tracing: false
    http:
      endpoint: ${at(query)}
    grpc:
      endpoint: ${at(queryGrpc)}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ${at(grpc)}
      http:
        endpoint: ${at(http)}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`
  await writeFile(join(dir, 'config.yaml'), config)
  const process = new ManagedProcess({
    name: 'jaeger',
    command: bin,
    args: [`--config=${join(dir, 'config.yaml')}`],
    logFile: join(dir, 'jaeger.log'),
    stopGraceMs: 5000,
  })
  process.start()
  const queryUrl = `http://${at(query)}`
  const stop = async () => {
    await process.stop()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await eventually(
      async () => {
        if (!process.running) throw new Error(`jaeger exited; see ${join(dir, 'jaeger.log')}`)
        const [q, o] = await Promise.all([
          fetch(`${queryUrl}/api/services`).catch(() => undefined),
          fetch(`http://${at(http)}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          }).catch(() => undefined),
        ])
        return q?.ok === true && o?.ok === true
      },
      { timeoutMs: 60_000, what: 'jaeger answers on its query API and OTLP/HTTP receiver' },
    )
  } catch (err) {
    await stop()
    throw err
  }
  return {
    otlpHttp: `http://${at(http)}`,
    otlpGrpc: at(grpc),
    query: queryUrl,
    traces: async (service) => {
      const res = await fetch(
        `${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=1000&lookback=1h`,
      )
      if (!res.ok) throw new Error(`jaeger /api/traces: HTTP ${res.status}`)
      return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? []
    },
    stop,
  }
}
