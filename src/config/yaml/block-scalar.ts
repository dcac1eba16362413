/**
 * @module yaml/block-scalar — literal `|` and folded `>` block scalars with chomping and indentation indicators.
 */
import { isBlank, type YamlCursor } from './cursor.ts'

/**
 * Reads a literal (`|`) or folded (`>`) block scalar whose header is at the cursor, with
 * optional chomping (`-` strip, `+` keep) and indentation (1–9, relative to `parent`)
 * indicators. Leaves the cursor at the start of the first line after the scalar.
 */
export function readBlockScalar(c: YamlCursor, parent: number): string {
  const folded = c.ch === '>'
  let chomp = ''
  let indent = -1
  c.pos++
  for (let i = 0; i < 2; i++) {
    if (!chomp && (c.ch === '-' || c.ch === '+')) chomp = c.src[c.pos++] ?? ''
    else if (indent < 0 && c.ch >= '1' && c.ch <= '9') indent = Math.max(parent, 0) + Number(c.src[c.pos++])
  }
  c.expectLineEnd('the block scalar header')
  const src = c.src
  const lines: string[] = []
  let leadingSpaces = 0
  let lastBreak = true
  if (c.ch === '\n') c.pos++
  while (!c.eof) {
    const lineStart = c.pos
    let p = lineStart
    while (src[p] === ' ') p++
    const spaces = p - lineStart
    const lineEnd = src.indexOf('\n', p) < 0 ? src.length : src.indexOf('\n', p)
    const empty = p === lineEnd
    if (indent < 0 && !empty) {
      if (spaces <= parent) break
      indent = spaces
      if (leadingSpaces > indent)
        throw c.error('a leading empty line of a block scalar has more spaces than its first line', lineStart)
    }
    if (empty && (indent < 0 || spaces <= indent)) {
      leadingSpaces = Math.max(leadingSpaces, spaces)
      lines.push('')
    } else if (spaces >= indent && !(indent === 0 && c.atDocumentMarker())) {
      lines.push(src.slice(lineStart + indent, lineEnd))
    } else break
    lastBreak = lineEnd < src.length
    c.pos = lastBreak ? lineEnd + 1 : lineEnd
  }
  let last = lines.length - 1
  while (last >= 0 && lines[last] === '') last--
  const body = lines.slice(0, last + 1)
  const trailing = lines.length - 1 - last
  const text = folded ? fold(body) : body.join('\n')
  if (chomp === '+') return text + '\n'.repeat(trailing + (last >= 0 && (trailing > 0 || lastBreak) ? 1 : 0))
  if (chomp === '-' || last < 0) return text
  return trailing > 0 || lastBreak ? `${text}\n` : text
}

/** Folds the lines of a `>` scalar: single breaks between unindented lines become spaces. */
function fold(body: string[]): string {
  let out = ''
  let prev = 0 // 0 = start, 1 = a normal line, 2 = a more-indented line
  let empties = 0
  for (const line of body) {
    if (line === '') {
      empties++
      continue
    }
    const kind = isBlank(line[0] ?? '') ? 2 : 1
    if (prev === 0) out += '\n'.repeat(empties)
    else if (prev === 1 && kind === 1) out += empties ? '\n'.repeat(empties) : ' '
    else out += '\n'.repeat(empties + 1)
    out += line
    prev = kind
    empties = 0
  }
  return out
}
