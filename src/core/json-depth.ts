/**
 * @module json-depth — the nesting depth of JSON bytes, found by one pass over the bytes before any
 * parse: `JSON.parse` itself copes with deep input, but what walks the parsed value afterwards
 * (`structuredClone`, a recursive diff, `JSON.stringify`) overflows the stack at a few thousand levels.
 *
 * Only brackets outside strings count; the bytes are not otherwise checked (the parse that follows does).
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * True when the JSON in `bytes` nests objects and arrays deeper than `max` levels (`{}` is depth 1).
 * Linear in the input, no allocation, never throws; stops at the first bracket past `max`.
 */
export function jsonDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0
  const end = bytes.length
  for (let i = 0; i < end; i++) {
    const c = bytes[i]!
    if (c === QUOTE) {
      // Skip the string: a bracket inside it is text.
      for (i++; i < end; i++) {
        const d = bytes[i]!
        if (d === BACKSLASH) i++
        else if (d === QUOTE) break
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}
