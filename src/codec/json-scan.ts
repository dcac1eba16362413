/**
 * @module json-scan — walks JSON bytes without building values: skips strings, numbers and containers,
 * compares keys as bytes, and reads back only the small values asked for.
 *
 * The walker checks structure (quotes closed, brackets balanced and matched, members separated by
 * `:` and `,`), not the grammar of skipped scalars: a malformed number deep inside an object is found
 * when the object is decoded, as `EDGEOP_ERR_DECODE` too. Every error names the offset and what was
 * expected, never the bytes (they may hold secrets).
 */
import { EdgeopError } from '../core/errors.ts'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LBRACE = 0x7b
const RBRACE = 0x7d
const LBRACKET = 0x5b
const RBRACKET = 0x5d
const COLON = 0x3a
const COMMA = 0x2c

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A JSON decode error that names where and what, never the content. */
export function scanError(what: string, at: number): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_DECODE', `malformed JSON at byte ${at}: ${what}`, { step: 'scan JSON' })
}

/** The index of the first byte at or after `i` that is not JSON whitespace. */
export function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
    i++
  }
  return i
}

/** `b[i]` is a quote: the index just past the closing quote. */
export function skipString(b: Uint8Array, i: number, end: number): number {
  for (let j = i + 1; j < end; j++) {
    const c = b[j]!
    if (c === QUOTE) return j + 1
    if (c === BACKSLASH) j++
    else if (c < 0x20) throw scanError('control character in a string', j)
  }
  throw scanError('unterminated string', i)
}

/** The index just past the JSON value starting at `i` (after whitespace). */
export function skipValue(b: Uint8Array, i: number, end: number): number {
  i = skipSpace(b, i, end)
  if (i >= end) throw scanError('value expected, input ends', i)
  const c = b[i]!
  if (c === QUOTE) return skipString(b, i, end)
  if (c === LBRACE || c === LBRACKET) return skipContainer(b, i, end)
  if (c === RBRACE || c === RBRACKET || c === COMMA || c === COLON) throw scanError('value expected', i)
  let j = i
  while (j < end) {
    const d = b[j]!
    if (d === COMMA || d === RBRACE || d === RBRACKET || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09)
      break
    if (d === QUOTE || d === LBRACE || d === LBRACKET || d === COLON)
      throw scanError('unexpected character', j)
    j++
  }
  return j
}

/** `b[i]` opens an object or array: the index just past its matching close. */
function skipContainer(b: Uint8Array, i: number, end: number): number {
  // Open brackets as a bit stack (1 = object) for the first 31 levels; deeper levels are only counted.
  let depth = 0
  let kinds = 0
  for (let j = i; j < end; j++) {
    const c = b[j]!
    if (c === QUOTE) {
      j = skipString(b, j, end) - 1
    } else if (c === LBRACE || c === LBRACKET) {
      if (depth < 31) kinds = (kinds << 1) | (c === LBRACE ? 1 : 0)
      depth++
    } else if (c === RBRACE || c === RBRACKET) {
      if (depth === 0) throw scanError('unbalanced bracket', j)
      depth--
      if (depth < 31) {
        if ((kinds & 1) !== (c === RBRACE ? 1 : 0)) throw scanError('mismatched bracket', j)
        kinds >>>= 1
      }
      if (depth === 0) return j + 1
    }
  }
  throw scanError('input ends inside a value', i)
}

/** One member of an object: key span (quotes included) and value span. */
export interface Member {
  keyStart: number
  keyEnd: number
  valueStart: number
  valueEnd: number
}

/**
 * Calls `visit` for each member of the object opening at `i` (after whitespace), in order; the value
 * is skipped unless `visit` returns the index just past it (having read it). Returns the index just
 * past the closing brace.
 */
export function eachMember(
  b: Uint8Array,
  i: number,
  end: number,
  visit: (m: Member, b: Uint8Array) => number | undefined,
): number {
  i = skipSpace(b, i, end)
  if (b[i] !== LBRACE) throw scanError(i >= end ? 'object expected, input ends' : 'object expected', i)
  i = skipSpace(b, i + 1, end)
  if (b[i] === RBRACE) return i + 1
  const m: Member = { keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0 }
  for (;;) {
    if (b[i] !== QUOTE) throw scanError(i >= end ? 'input ends inside an object' : 'member name expected', i)
    m.keyStart = i
    m.keyEnd = skipString(b, i, end)
    i = skipSpace(b, m.keyEnd, end)
    if (b[i] !== COLON) throw scanError('colon expected', i)
    m.valueStart = skipSpace(b, i + 1, end)
    m.valueEnd = visit(m, b) ?? skipValue(b, m.valueStart, end)
    i = skipSpace(b, m.valueEnd, end)
    const c = b[i]
    if (c === RBRACE) return i + 1
    if (c !== COMMA) throw scanError(i >= end ? 'input ends inside an object' : 'comma or } expected', i)
    i = skipSpace(b, i + 1, end)
  }
}

/** Whether the key span `[s, e)` (quotes included) is the ASCII name `name`, escapes decoded. */
export function keyIs(b: Uint8Array, s: number, e: number, name: string): boolean {
  const n = e - s - 2
  if (n === name.length) {
    let same = true
    for (let k = 0; k < n; k++) {
      if (b[s + 1 + k] !== name.charCodeAt(k)) {
        same = false
        break
      }
    }
    if (same) return true
  }
  // An escaped key (`"na\u006de"`) may still spell the name: rare, decoded the slow way.
  return b.subarray(s, e).includes(BACKSLASH) && readString(b, s, e) === name
}

/** The string value spanning `[s, e)` (quotes included). */
export function readString(b: Uint8Array, s: number, e: number): string {
  if (b[s] !== QUOTE) throw scanError('string expected', s)
  const inner = b.subarray(s + 1, e - 1)
  try {
    return inner.includes(BACKSLASH)
      ? (JSON.parse(utf8.decode(b.subarray(s, e))) as string)
      : utf8.decode(inner)
  } catch (cause) {
    throw new EdgeopError('EDGEOP_ERR_DECODE', `malformed JSON string at byte ${s}`, {
      step: 'scan JSON',
      cause: quietCause(cause),
    })
  }
}

/** The JSON value spanning `[s, e)`, parsed (for small values only). */
export function readValue(b: Uint8Array, s: number, e: number): unknown {
  try {
    return JSON.parse(utf8.decode(b.subarray(s, e)))
  } catch (cause) {
    throw new EdgeopError('EDGEOP_ERR_DECODE', `malformed JSON value at byte ${s}`, {
      step: 'scan JSON',
      cause: quietCause(cause),
    })
  }
}

/** The bytes as UTF-8 text; `EDGEOP_ERR_DECODE` when they are not UTF-8. */
export function utf8Text(b: Uint8Array): string {
  try {
    return utf8.decode(b)
  } catch (cause) {
    throw new EdgeopError('EDGEOP_ERR_DECODE', 'JSON bytes are not valid UTF-8', {
      step: 'decode JSON',
      cause,
    })
  }
}

/** A parse failure as a cause without its message: V8's JSON errors quote the input, which may hold secrets. */
export function quietCause(cause: unknown): Error {
  return new Error(cause instanceof Error ? cause.name : 'Error')
}
