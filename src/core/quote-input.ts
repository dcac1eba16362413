/**
 * @module quote-input — user input inside messages: quoted, escaped onto one line, and cut to a bounded length.
 *
 * Every name, key or value that came from a file, a flag or the network goes into an error
 * or log message through {@link quoteInput}, so that a hostile or broken input (a 50 MB
 * scalar, a NUL, a line break) can neither flood a log line nor forge a second one.
 */

/**
 * At most this many characters of one input are quoted: 80, room for any real Kubernetes
 * name (a DNS subdomain is at most 253, but names that long are generated and their first
 * 80 characters identify them) while a message stays one readable line.
 */
export const MAX_QUOTED_INPUT_CHARS = 80
/** At most this many inputs of a list are quoted; the rest are counted. */
export const MAX_QUOTED_INPUTS = 10

/**
 * `value` in double quotes with JSON escapes (control characters, quotes and backslashes
 * become visible escapes, so the result is one line). Longer than `max` characters: the
 * first `max`, then `…` and the full length, e.g. `"aaaa…" (52428800 characters)`.
 */
export function quoteInput(value: string, max = MAX_QUOTED_INPUT_CHARS): string {
  if (value.length <= max) return JSON.stringify(value)
  // Never cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(value[max - 1] ?? '') ? max - 1 : max
  return `${JSON.stringify(`${value.slice(0, end)}…`)} (${value.length} characters)`
}

/** Up to `max` of `values`, each through {@link quoteInput}, comma-separated; then `and N more`. `none` when empty. */
export function quoteInputs(values: Iterable<string>, max = MAX_QUOTED_INPUTS): string {
  const all = [...values]
  if (all.length === 0) return 'none'
  const shown = all.slice(0, max).map((v) => quoteInput(v))
  return all.length > max ? `${shown.join(', ')} and ${all.length - max} more` : shown.join(', ')
}
