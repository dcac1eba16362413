/**
 * @module utf8 — where bytes stop being UTF-8, and the line and column of an offset, for errors that point at a byte.
 */

/** Offset of the first byte that does not start a valid UTF-8 sequence (Go `utf8.Valid` rules), or the length. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  while (i < b.length) {
    const c = b[i] ?? 0
    if (c < 0x80) {
      i++
      continue
    }
    // Sequence length and the allowed range of the second byte (no overlongs, no surrogates, ≤ U+10FFFF).
    let n = 0
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) n = 2
    else if (c >= 0xe0 && c <= 0xef) {
      n = 3
      if (c === 0xe0) lo = 0xa0
      if (c === 0xed) hi = 0x9f
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4
      if (c === 0xf0) lo = 0x90
      if (c === 0xf4) hi = 0x8f
    } else return i
    if (i + n > b.length) return i
    const second = b[i + 1] ?? 0
    if (second < lo || second > hi) return i
    for (let k = 2; k < n; k++) {
      const next = b[i + k] ?? 0
      if (next < 0x80 || next > 0xbf) return i
    }
    i += n
  }
  return b.length
}

/** The 1-based line and column (in characters) of byte offset `at` of valid-UTF-8-before-`at` `bytes`. */
export function bytePosition(bytes: Uint8Array, at: number): { line: number; column: number } {
  const before = Buffer.from(bytes.buffer, bytes.byteOffset, at)
  const lineStart = before.lastIndexOf(0x0a) + 1
  let line = 1
  for (const b of before) if (b === 0x0a) line++
  return { line, column: [...before.subarray(lineStart).toString('utf8')].length + 1 }
}
