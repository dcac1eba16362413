/**
 * @module logger — the operator's {@link Logger}: JSON lines by default, a human format for terminals.
 *
 * Every value goes through one sanitizer before it is written: errors become `{ message, code }` (never
 * their `cause` or stack, which may hold a request or a credential), cycles become `"[circular]"`,
 * binary data becomes its length, and then core's {@link redactFields} replaces credential-like fields.
 */
import { type Clock, realClock } from '../core/clock.ts'
import { type LogFields, type Logger, type LogLevel, redactFields } from '../core/log.ts'

/** `info`: the default of controller-runtime's zap options (production) and of klog (`-v=0`). */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info'
/** `json`: what log pipelines parse (controller-runtime's production encoder); `text` is for people. */
export const DEFAULT_LOG_FORMAT: LogFormat = 'json'
/**
 * `warn`: what the library logs when its user configured no logger. Silence hid a cluster that could
 * not be reached (two quiet minutes until the cache sync timeout); `info` would narrate every start
 * inside someone else's program. Warnings and errors are the lines a user must not miss.
 */
export const DEFAULT_LIBRARY_LOG_LEVEL: LogLevel = 'warn'
/** Nesting kept before a value is cut to `"[object]"`, below core's redaction depth so all of it is redacted. */
export const MAX_LOG_DEPTH = 6

/** Output formats. */
export type LogFormat = 'json' | 'text'

/** Where lines go: anything with `write(string)` (`process.stderr`, a test buffer). */
export interface LogStream {
  /** Receives one whole line, newline included, per log call; its result is ignored and a throw is swallowed. */
  write(chunk: string): unknown
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lines below this level are dropped before any formatting. Default {@link DEFAULT_LOG_LEVEL}. */
  level?: LogLevel
  /** Default {@link DEFAULT_LOG_FORMAT}. */
  format?: LogFormat
  /** Default `process.stderr` (controller-runtime and klog log to stderr). */
  stream?: LogStream
  /** Source of each line's `ts` (`clock.now()`, wall time). Default {@link realClock}. */
  clock?: Clock
  /** Fields on every line. */
  fields?: LogFields
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }
const RESERVED = new Set(['ts', 'level', 'msg'])

/**
 * Creates a logger.
 *
 * Guarantees: one line per call, written with a single `write`; JSON lines start with `ts` (ISO 8601
 * from `clock`), `level`, `msg`, then the bound fields, then the call's (a call's field overrides a
 * bound one; a field named `ts`, `level` or `msg` is written as `_ts`, `_level`, `_msg`); fields whose
 * names look like credentials are `"[redacted]"` at any depth; a failing stream never throws into the
 * caller.
 *
 * Does not guarantee: that `msg` itself holds no secret (never interpolate one); field order beyond
 * insertion order.
 *
 * @example
 * const log = createLogger({ format: 'text' }).child({ controller: 'mirror', reconcileID: id })
 * log.info('reconciled', { namespace: 'a', name: 'b' })
 * // 2026-01-01T00:00:00.000Z INFO  reconciled controller=mirror reconcileID=… namespace=a name=b
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? DEFAULT_LOG_LEVEL]
  const text = (options.format ?? DEFAULT_LOG_FORMAT) === 'text'
  const stream = options.stream ?? process.stderr
  const clock = options.clock ?? realClock

  const write = (level: LogLevel, msg: string, fields: LogFields): void => {
    const ts = new Date(clock.now()).toISOString()
    const safe = redactFields(sanitize(fields, 0, []) as LogFields)
    let line: string
    if (text) {
      line = `${ts} ${level.toUpperCase().padEnd(5)} ${msg}`
      for (const [k, v] of Object.entries(safe)) line += ` ${k}=${textValue(v)}`
    } else {
      const out: LogFields = { ts, level, msg }
      for (const [k, v] of Object.entries(safe)) out[RESERVED.has(k) ? `_${k}` : k] = v
      line = JSON.stringify(out)
    }
    try {
      stream.write(`${line}\n`)
    } catch {
      // Logging must never take the operator down (a closed pipe, a full disk).
    }
  }

  const make = (bound: LogFields): Logger => {
    const at =
      (level: LogLevel) =>
      (msg: string, fields?: LogFields): void => {
        if (RANK[level] >= min) write(level, msg, fields ? { ...bound, ...fields } : bound)
      }
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (fields) => make({ ...bound, ...fields }),
    }
  }
  return make({ ...options.fields })
}

let library: Logger | undefined

/**
 * The logger {@link Manager} and {@link Controller} use when given none: {@link DEFAULT_LIBRARY_LOG_LEVEL}
 * and above, as JSON lines on stderr — the binary's format, so one log pipeline reads an embedding
 * program's lines and the operator's alike, and fields such as `error` and `code` stay structured.
 * Pass `logger` (e.g. `createLogger({ format: 'text', level: 'info' })`, or `noopLogger` for silence)
 * to replace it. Created on first use and shared.
 */
export function defaultLogger(): Logger {
  library ??= createLogger({ level: DEFAULT_LIBRARY_LOG_LEVEL })
  return library
}

/**
 * A JSON-safe copy of `value`: errors as `{ message, code }`, dates as ISO strings, binary as
 * `"[N bytes]"`, bigints as strings, functions and symbols dropped, cycles as `"[circular]"`, and
 * anything nested deeper than {@link MAX_LOG_DEPTH} as `"[object]"`.
 */
export function sanitize(value: unknown, depth: number, ancestors: object[]): unknown {
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  if (typeof value === 'function' || typeof value === 'symbol') return undefined
  if (value === null || typeof value !== 'object') return value
  if (ancestors.includes(value)) return '[circular]'
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code
    return code === undefined ? { message: value.message } : { message: value.message, code: String(code) }
  }
  if (depth >= MAX_LOG_DEPTH) return '[object]'
  const inner = [...ancestors, value]
  if (Array.isArray(value)) return value.map((v) => sanitize(v, depth + 1, inner) ?? null)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    const s = sanitize(v, depth + 1, inner)
    if (s !== undefined) out[k] = s
  }
  return out
}

/** A logfmt-style value: bare when it is a simple word, JSON otherwise. */
function textValue(v: unknown): string {
  return typeof v === 'string' && /^[^\s"=\\]+$/.test(v) ? v : JSON.stringify(v)
}
