/**
 * @module duration — Go duration strings (`15s`, `1m30s`, `500ms`), as Kubernetes flags spell them.
 */

/**
 * The longest delay a Node timer honours: 2³¹−1 ms ≈ 24.8 days. A longer `setTimeout` fires after
 * 1 ms instead (Node docs, `setTimeout`: TimeoutOverflowWarning), so a duration flag above it would
 * turn a wait into a busy loop. Every duration flag's maximum is at most this.
 */
export const NODE_TIMER_MAX_MS = 2 ** 31 - 1

/** Milliseconds per unit of Go's `time.ParseDuration` (`us` and `µs`/`μs` are microseconds). */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
}

/** One `<decimal><unit>` part; `\d+(?:\.\d*)?` rather than `\d+\.?\d*`, which backtracks quadratically. */
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y

/**
 * Parses a Go duration (`time.ParseDuration`): an optional sign, then one or more
 * `<decimal><unit>` parts (`1h2m3.5s`), or a bare `0`. Returns milliseconds (fractional for sub-ms
 * units), or undefined when `text` is not a duration (`15`, `1d`, `s`, `""`).
 *
 * @example
 * parseDuration('1m30s') // 90000
 */
export function parseDuration(text: string): number | undefined {
  const sign = text.startsWith('-') ? -1 : 1
  const body = text.replace(/^[+-]/, '')
  if (body === '0') return 0
  if (body === '') return undefined
  let ms = 0
  PART.lastIndex = 0
  while (PART.lastIndex < body.length) {
    const m = PART.exec(body)
    if (m === null) return undefined
    ms += Number(m[1]) * UNIT_MS[m[2]!]!
  }
  return sign * ms
}

/**
 * Formats milliseconds the way Go's `Duration.String` does for whole milliseconds: `0s`, `500ms`,
 * `15s`, `1m30s`, `1h0m0s`, `1.5s`.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s'
  const sign = ms < 0 ? '-' : ''
  const abs = Math.abs(ms)
  if (abs < 1000) return `${sign}${abs}ms`
  const h = Math.floor(abs / 3_600_000)
  const m = Math.floor((abs % 3_600_000) / 60_000)
  const s = (abs % 60_000) / 1000
  return `${sign}${h > 0 ? `${h}h${m}m` : m > 0 ? `${m}m` : ''}${s}s`
}
