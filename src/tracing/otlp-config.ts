/**
 * @module otlp-config — the exporter and sampler from OpenTelemetry's standard environment variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/ and
 * …/protocol/exporter/):
 *
 * - `OTEL_SDK_DISABLED=true`: no tracing at all;
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` +
 *   `/v1/traces`, else `http://localhost:4318/v1/traces`;
 * - `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values
 *   URL-encoded);
 * - `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT` (ms);
 * - `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc` is refused; the
 *   HTTP ones are sent as JSON (receivers take both encodings on the same path);
 * - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`k=v,…`);
 * - `OTEL_TRACES_SAMPLER` (`always_on`, `always_off`, `traceidratio`, `parentbased_always_on` — the
 *   default —, `parentbased_always_off`, `parentbased_traceidratio`) and `OTEL_TRACES_SAMPLER_ARG`
 *   (the ratio, 0–1, default 1).
 */
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError } from '../core/errors.ts'
import { DEFAULT_OTLP_TIMEOUT_MS, type OtlpExporterOptions } from './otlp-exporter.ts'
import type { Sampler } from './sampler.ts'

/** OpenTelemetry's default OTLP/HTTP endpoint (a collector on the same host, port 4318). */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318'

/** What {@link otlpConfigFromEnv} read: the exporter's options and the sampler. */
export interface OtlpConfig {
  /** Endpoint, headers, timeout and resource (`service.name`, `service.version`, `OTEL_RESOURCE_ATTRIBUTES`). */
  exporter: OtlpExporterOptions & { headers: Record<string, string>; timeoutMs: number }
  /** The sampler. */
  sampler: Sampler
}

/** Throws `EDGEOP_ERR_CONFIG` naming the variable and what it must be (never quoting its value). */
function check(ok: unknown, name: string, expected: string): void {
  if (!ok)
    throw new EdgeopError('EDGEOP_ERR_CONFIG', `${name}: expected ${expected}`, { step: 'configure tracing' })
}

/** `k=v,k2=v2` with URL-encoded values; a bad entry is named by position (values may be secrets). */
function pairs(text: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [i, entry] of (text ?? '').split(',').entries()) {
    const eq = entry.indexOf('=')
    let value: string | undefined
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim())
    } catch {}
    check(!entry.trim() || (eq > 0 && value !== undefined), name, `key=value pairs (entry ${i + 1})`)
    if (eq > 0) out[entry.slice(0, eq).trim()] = value!
  }
  return out
}

/**
 * The OTLP exporter's options and the sampler from `env`; undefined when `OTEL_SDK_DISABLED` is
 * `true`. `service` names the service when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES`
 * does. Throws `EDGEOP_ERR_CONFIG` naming the variable (never quoting a value) when one is invalid.
 */
export function otlpConfigFromEnv(
  env: NodeJS.ProcessEnv,
  service: { name: string; version?: string },
): OtlpConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined
  const X = 'OTEL_EXPORTER_OTLP_'
  const traces = (key: string) => env[`${X}TRACES_${key}`] || env[X + key]
  const url =
    env[`${X}TRACES_ENDPOINT`] ??
    `${(env[`${X}ENDPOINT`] || DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`
  check(/^https?:\/\/./.test(url) && URL.canParse(url), `${X}[TRACES_]ENDPOINT`, 'an http(s) URL')
  check(traces('PROTOCOL') !== 'grpc', `${X}[TRACES_]PROTOCOL`, 'http/json or http/protobuf')
  const timeoutMs = Number(traces('TIMEOUT') || DEFAULT_OTLP_TIMEOUT_MS)
  check(Number.isInteger(timeoutMs) && timeoutMs > 0, `${X}[TRACES_]TIMEOUT`, 'ms > 0')
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG || 1)
  check(ratio >= 0 && ratio <= 1, 'OTEL_TRACES_SAMPLER_ARG', '0..1')
  const m = /^(parentbased_)?(always_on|always_off|traceidratio)$/.exec(
    env.OTEL_TRACES_SAMPLER || 'parentbased_always_on',
  )
  check(m, 'OTEL_TRACES_SAMPLER', '[parentbased_]always_on, always_off or traceidratio')
  const attributes = pairs(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES')
  return {
    exporter: {
      url,
      headers: pairs(traces('HEADERS'), `${X}[TRACES_]HEADERS`),
      timeoutMs,
      resource: definedProps({
        'service.version': service.version,
        ...attributes,
        'service.name': env.OTEL_SERVICE_NAME || attributes['service.name'] || service.name,
      }),
    },
    sampler: { ratio: m![2] === 'always_on' ? 1 : m![2] === 'always_off' ? 0 : ratio, parentBased: !!m![1] },
  }
}
