/**
 * @module yaml/flow — flow collections, `[a, b]` and `{k: v}`, which may span lines.
 */
import { readPlain, readQuoted, resolvePlain } from './scalars.ts'
import type { YamlState } from './state.ts'

/**
 * Reads the flow collection at the cursor (on `[` or `{`) and leaves the cursor after its
 * closing bracket. Lines inside must be indented more than `parent`; the closing bracket
 * may sit at `parent`. `"key: value"` entries inside a flow sequence are refused.
 */
export function readFlow(state: YamlState, parent: number): unknown {
  return state.nested(() => {
    const c = state.cursor
    const start = c.pos
    const close = c.ch === '[' ? ']' : '}'
    const list: unknown[] = []
    const map: Record<string, unknown> = {}
    const lines = new Map<string, number>()
    const space = (): void => skipSpace(state, start, parent)
    c.pos++
    for (;;) {
      space()
      if (c.ch === close) break
      const entryPos = c.pos
      if (close === ']') {
        list.push(flowNode(state, parent))
        space()
        if (c.ch === ':') throw c.error('"key: value" pairs inside a flow sequence are not supported')
      } else {
        const key = flowKey(state, parent)
        space()
        let value: unknown = null
        if (c.ch === ':') {
          c.pos++
          space()
          const next: string = c.ch
          if (next !== ',' && next !== '}') value = flowNode(state, parent)
        }
        state.set(map, lines, key, value, entryPos)
      }
      space()
      if (c.ch === ',') c.pos++
      else if (c.ch !== close) throw c.error(`expected "," or "${close}" in a flow collection`)
    }
    c.pos++
    return close === ']' ? list : map
  })
}

function skipSpace(state: YamlState, start: number, parent: number): void {
  const c = state.cursor
  const crossed = c.skipToContent()
  if (c.eof || c.atDocumentMarker()) throw c.error('unterminated flow collection', start)
  if (crossed && c.col() <= parent && !(c.col() === parent && (c.ch === ']' || c.ch === '}'))) {
    throw c.error(
      'a flow collection continues on a line that is not indented enough (is a closing bracket missing?)',
      start,
    )
  }
}

function flowKey(state: YamlState, parent: number): string {
  const c = state.cursor
  const start = c.pos
  state.refuseKeyStart()
  const oneLine = (multiLine: boolean): void => {
    if (multiLine) throw c.error('a mapping key must fit on one line', start)
  }
  if (c.ch === '"' || c.ch === "'") {
    const { value, multiLine } = readQuoted(c, parent)
    oneLine(multiLine)
    return value
  }
  const { text, multiLine } = readPlain(c, parent, true)
  oneLine(multiLine)
  return state.keyString(resolvePlain(text), start)
}

function flowNode(state: YamlState, parent: number): unknown {
  const c = state.cursor
  const ch = c.ch
  if (ch === '[' || ch === '{') return readFlow(state, parent)
  if (ch === '"' || ch === "'") return readQuoted(c, parent).value
  if (ch === '*') return state.alias()
  if (ch === '&') {
    return state.anchor(() => {
      c.skipToContent()
      return flowNode(state, parent)
    })
  }
  if (ch === '!') throw c.error('YAML tags (!tag) are not supported')
  return resolvePlain(readPlain(c, parent, true).text)
}
