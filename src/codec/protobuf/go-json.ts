/**
 * @module go-json — the JSON forms of Go's time types as `encoding/json` writes them for Kubernetes:
 * `metav1.Time`, `metav1.MicroTime` and `metav1.Duration`.
 */

/** The last second {@link rfc3339} formatted, and its text. */
let lastSeconds = Number.NaN
let lastTime = ''

/** `metav1.Time`'s JSON: RFC 3339 in UTC, whole seconds (`2006-01-02T15:04:05Z`). */
export function rfc3339(seconds: number): string {
  // Objects of one list often share their timestamps: keep the last one.
  if (seconds === lastSeconds) return lastTime
  const iso = new Date(seconds * 1000).toISOString()
  lastSeconds = seconds
  lastTime = `${iso.slice(0, 19)}Z`
  return lastTime
}

/** `metav1.MicroTime`'s JSON: RFC 3339 in UTC with six fractional digits. */
export function rfc3339Micro(seconds: number, nanos: number): string {
  const iso = new Date(seconds * 1000).toISOString()
  const micros = Math.floor(nanos / 1000)
  return `${iso.slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
}

const UNITS: readonly [string, number][] = [
  ['h', 3600e9],
  ['m', 60e9],
]

/** `metav1.Duration`'s JSON: Go's `time.Duration.String()` (`1h2m3.5s`, `150ms`, `0s`). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  let rest = Math.abs(ns)
  if (rest < 1e9) {
    if (rest < 1e3) return `${sign}${rest}ns`
    if (rest < 1e6) return `${sign}${trim(rest / 1e3)}µs`
    return `${sign}${trim(rest / 1e6)}ms`
  }
  let out = sign
  let started = false
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size)
    if (n > 0 || started) {
      out += `${n}${unit}`
      started = true
    }
    rest -= n * size
  }
  return `${out}${trim(rest / 1e9)}s`
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)))
}
