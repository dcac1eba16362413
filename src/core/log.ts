/**
 * @module log — the logger interface every component takes, and a no-op default.
 *
 * edgeop ships no logging library: components log through this interface, and the
 * operator binary supplies JSON or human output. Fields are structured; a field
 * whose name looks like a credential is redacted by {@link redactFields}.
 */

/** Log levels, most verbose first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Structured fields attached to a log line. */
export type LogFields = Record<string, unknown>

/** A structured logger. `child` binds fields (object key, reconcile ID) to every line. */
export interface Logger {
  /** Detail for debugging; off by default in the binary. */
  debug(msg: string, fields?: LogFields): void
  /** Normal operation worth recording. */
  info(msg: string, fields?: LogFields): void
  /** Something went wrong and was handled (a retry, a fallback). */
  warn(msg: string, fields?: LogFields): void
  /** Something failed and needs attention. */
  error(msg: string, fields?: LogFields): void
  /** A logger that adds `fields` to every line it writes. */
  child(fields: LogFields): Logger
}

/** A logger that drops everything. The default for library components. */
export const noopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return noopLogger
  },
}

const SECRET_FIELD = /token|password|secret|authorization|bearer|key|credential|cert/i

/**
 * Returns a copy of `fields` with the values of credential-like keys replaced by
 * `'[redacted]'`, at any depth. Applied by every logger edgeop provides.
 */
export function redactFields(fields: LogFields): LogFields {
  return redactValue(fields, 0) as LogFields
}

function redactValue(value: unknown, depth: number): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value
  if (value instanceof Error) return { message: value.message, code: (value as { code?: unknown }).code }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      SECRET_FIELD.test(k) && v !== undefined && v !== null && typeof v !== 'boolean'
        ? '[redacted]'
        : redactValue(v, depth + 1)
  }
  return out
}
