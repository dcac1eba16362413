/**
 * @module yaml/scalars — quoted and plain scalars of the kubeconfig YAML subset, and how plain ones resolve.
 *
 * Plain scalars resolve the way client-go sees them: kubeconfigs are decoded by
 * `sigs.k8s.io/yaml` on top of go-yaml v2, which follows YAML 1.1 (so `yes`/`no`/`on`/`off`
 * are booleans and `017` is octal).
 */

import { quoteInput } from '../../core/quote-input.ts'
import { isBlank, isBlankOrEnd, type YamlCursor } from './cursor.ts'

/** Characters that may not start a plain scalar (YAML 1.2 §7.3.3 `c-indicator`, minus `-?:`). */
const NOT_PLAIN_START = ',[]{}#&*!|>\'"%@`'
/** Flow indicators: they end a plain scalar inside `[...]` / `{...}`. */
const FLOW_INDICATORS = ',[]{}'

/** Plain words go-yaml v2 resolves to null (go-yaml v2 `resolve.go`, as used by client-go). */
const NULL_WORDS = ['', '~', 'null', 'Null', 'NULL']
/** Plain words go-yaml v2 resolves to true (YAML 1.1 bool type). */
const TRUE_WORDS = ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']
/** Plain words go-yaml v2 resolves to false (YAML 1.1 bool type). */
const FALSE_WORDS = ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']
/** Integers: hexadecimal, YAML 1.1 octal (leading 0), decimal. */
const INT = /^([-+]?)(?:0x([0-9a-fA-F]+)|0([0-7]+)|([0-9]+))$/
/** go-yaml v2 `yamlStyleFloat`. */
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/

/** Double-quoted single-character escapes (YAML 1.2 §5.7). */
const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
}

/**
 * Resolves the text of a plain scalar to null, a boolean, a number or the string itself,
 * as go-yaml v2 does (YAML 1.1 words; decimal, octal and hexadecimal integers; floats,
 * `.inf`, `.nan`). Binary, sexagesimal, `_`-separated numbers and timestamps stay strings.
 */
export function resolvePlain(text: string): unknown {
  if (NULL_WORDS.includes(text)) return null
  if (TRUE_WORDS.includes(text)) return true
  if (FALSE_WORDS.includes(text)) return false
  const int = INT.exec(text)
  if (int) {
    const [, sign, hex, oct, dec] = int
    const n = hex ? Number.parseInt(hex, 16) : oct ? Number.parseInt(oct, 8) : Number(dec)
    return n === 0 ? 0 : sign === '-' ? -n : n
  }
  if (FLOAT.test(text)) return Number(text)
  if (/^[-+]?\.(inf|Inf|INF)$/.test(text)) return text[0] === '-' ? -Infinity : Infinity
  if (/^\.(nan|NaN|NAN)$/.test(text)) return Number.NaN
  return text
}

/**
 * Reads a single- or double-quoted scalar starting at the cursor; leaves the cursor after
 * the closing quote. Line breaks fold as in YAML (one break → a space, n+1 breaks → n
 * newlines); continuation lines must be indented more than `parent`.
 */
export function readQuoted(c: YamlCursor, parent: number): { value: string; multiLine: boolean } {
  const start = c.pos
  const quote = c.ch
  const double = quote === '"'
  let out = ''
  let keep = 0 // folding trims the blanks after this length
  let multiLine = false
  c.pos++
  for (;;) {
    const ch = c.ch
    if (ch === '') throw c.error(`unterminated ${double ? 'double' : 'single'}-quoted string`, start)
    if (ch === quote && (double || c.at(1) !== "'")) {
      c.pos++
      return { value: out, multiLine }
    }
    if (ch === '\n' || (double && ch === '\\' && c.at(1) === '\n')) {
      const escaped = ch === '\\'
      if (escaped) c.pos++
      else out = out.slice(0, keep)
      const breaks = skipBreaks(c, parent, start)
      out += escaped ? '\n'.repeat(breaks - 1) : breaks === 1 ? ' ' : '\n'.repeat(breaks - 1)
      keep = out.length
      multiLine = true
    } else if (!double && ch === "'") {
      out += "'"
      c.pos += 2
      keep = out.length
    } else if (double && ch === '\\') {
      out += readEscape(c)
      keep = out.length
    } else {
      out += ch
      c.pos++
      if (!isBlank(ch)) keep = out.length
    }
  }
}

/** At a line break inside a quoted scalar: skips it, empty lines and the next line's indentation; returns the number of breaks. */
function skipBreaks(c: YamlCursor, parent: number, start: number): number {
  let breaks = 0
  while (c.ch === '\n') {
    breaks++
    c.pos++
    while (isBlank(c.ch)) c.pos++
  }
  if (c.eof) throw c.error('unterminated quoted string', start)
  if (c.atDocumentMarker() || (parent >= 0 && indentOf(c) <= parent)) {
    throw c.error(
      'a quoted string continues on a line that is not indented enough (is a closing quote missing?)',
      start,
    )
  }
  return breaks
}

/** Number of spaces that start the cursor's line. */
function indentOf(c: YamlCursor): number {
  const lineStart = c.pos - c.col()
  let p = lineStart
  while (c.src[p] === ' ') p++
  return p - lineStart
}

function readEscape(c: YamlCursor): string {
  const kind = c.at(1)
  const simple = Object.hasOwn(ESCAPES, kind) ? ESCAPES[kind] : undefined
  if (simple !== undefined) {
    c.pos += 2
    return simple
  }
  const len = kind === 'x' ? 2 : kind === 'u' ? 4 : kind === 'U' ? 8 : 0
  const hex = c.src.slice(c.pos + 2, c.pos + 2 + len)
  const code = Number.parseInt(hex, 16)
  if (len === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len || code > 0x10ffff) {
    throw c.error('invalid escape sequence in a double-quoted string')
  }
  c.pos += 2 + len
  return String.fromCodePoint(code)
}

/** A plain scalar as read: its text, whether a `:` indicator follows (it is a key), whether it spans lines. */
export interface PlainScalar {
  text: string
  key: boolean
  multiLine: boolean
}

/**
 * Reads a plain scalar at the cursor. Stops before a `: ` indicator (then `key` is true and
 * the scalar is a single line), before ` #`, and in flow context before `,[]{}`.
 * Continuation lines must be indented more than `parent`; they fold like quoted scalars.
 */
export function readPlain(c: YamlCursor, parent: number, flow: boolean): PlainScalar {
  const ch = c.ch
  if (NOT_PLAIN_START.includes(ch) || ('-?:'.includes(ch) && endsPlain(c.at(1), flow))) {
    throw c.error(`a plain value cannot start with ${quoteInput(ch)}; quote the value`)
  }
  let line = readPlainLine(c, flow)
  if (line.stop === 'key') return { text: line.text, key: true, multiLine: false }
  let text = line.text
  let multiLine = false
  while (line.stop === 'end') {
    let p = c.pos
    while (isBlank(c.src[p] ?? '')) p++
    let breaks = 0
    let spaces = 0
    while (c.src[p] === '\n') {
      breaks++
      const lineStart = ++p
      while (c.src[p] === ' ') p++
      spaces = p - lineStart
      while (isBlank(c.src[p] ?? '')) p++
    }
    const first = c.src[p] ?? ''
    if (breaks === 0 || first === '' || first === '#' || spaces <= parent) break
    if (flow && FLOW_INDICATORS.includes(first)) break
    const save = c.pos
    c.pos = p
    if (c.atDocumentMarker()) {
      c.pos = save
      break
    }
    line = readPlainLine(c, flow)
    if (line.stop === 'key') {
      throw c.error(
        'unexpected mapping key: this line continues the value above it (check the indentation)',
        p,
      )
    }
    text += (breaks === 1 ? ' ' : '\n'.repeat(breaks - 1)) + line.text
    multiLine = true
  }
  return { text, key: false, multiLine }
}

function endsPlain(next: string, flow: boolean): boolean {
  return isBlankOrEnd(next) || (flow && FLOW_INDICATORS.includes(next))
}

/** Reads one line of a plain scalar; the cursor ends after its last non-blank character, or at the `:` indicator. */
function readPlainLine(c: YamlCursor, flow: boolean): { text: string; stop: 'key' | 'comment' | 'end' } {
  const start = c.pos
  let stop: 'key' | 'comment' | 'end' = 'end'
  for (;;) {
    const ch = c.ch
    if (ch === '' || ch === '\n' || (flow && FLOW_INDICATORS.includes(ch))) break
    if (ch === ':' && endsPlain(c.at(1), flow)) {
      stop = 'key'
      break
    }
    if (c.atComment()) {
      stop = 'comment'
      break
    }
    c.pos++
  }
  let end = c.pos
  while (end > start && isBlank(c.src[end - 1] ?? '')) end--
  if (stop !== 'key') c.pos = end
  return { text: c.src.slice(start, end), stop }
}
