/**
 * @module yaml — a small strict reader for the YAML subset kubeconfig files use.
 *
 * Supported: one document (optional `---`, optional `...`), block mappings and sequences
 * (including sequences at the same indentation as their key), flow `[...]` / `{...}`,
 * plain / single- / double-quoted / literal `|` / folded `>` scalars, comments, anchors
 * `&a` and aliases `*a` (at most 100 aliases, {@link MAX_YAML_ALIASES}, adding at most 100,000 nodes,
 * {@link MAX_YAML_ALIAS_NODES}). Refused with a `file:line:column` error: tabs in indentation,
 * bad indentation, several documents, directives, tags, merge keys `<<`, complex keys,
 * and a key repeated with a different value (a repeat with an equal value is accepted,
 * as client-go does). Plain scalars resolve as client-go sees them (YAML 1.1, see
 * {@link resolvePlain}). Output: plain objects, arrays and primitives; a `__proto__` key
 * becomes an own property and never changes a prototype.
 */
import { readBlockScalar } from './block-scalar.ts'
import { isBlankOrEnd, YamlCursor } from './cursor.ts'
import { readFlow } from './flow.ts'
import { readPlain, readQuoted, resolvePlain } from './scalars.ts'
import { YamlState } from './state.ts'

export { MAX_YAML_ALIAS_NODES, MAX_YAML_ALIASES, MAX_YAML_DEPTH } from './state.ts'

/** The name errors use for text that did not come from a file. */
export const YAML_DEFAULT_SOURCE_NAME = '<yaml>'

/** Options for {@link parseYaml}. */
export interface YamlParseOptions {
  /** Name used in error messages. Default `<yaml>` ({@link YAML_DEFAULT_SOURCE_NAME}). */
  file?: string
}

/** Where a node is: the whole document, the value of a mapping key, or a sequence entry. */
type Place = 'doc' | 'value' | 'entry'

/**
 * Parses one YAML document of the kubeconfig subset into plain JavaScript values.
 * An empty document is `null`.
 *
 * @throws EdgeopError `EDGEOP_ERR_YAML` naming `file:line:column`; the message never quotes the text.
 */
export function parseYaml(text: string, options: YamlParseOptions = {}): unknown {
  return new BlockReader(
    new YamlState(new YamlCursor(text, options.file ?? YAML_DEFAULT_SOURCE_NAME)),
  ).document()
}

/** Block structure: the document, block mappings and block sequences. */
class BlockReader {
  readonly #s: YamlState
  readonly #c: YamlCursor

  constructor(state: YamlState) {
    this.#s = state
    this.#c = state.cursor
  }

  document(): unknown {
    const c = this.#c
    c.skipToContent()
    if (c.ch === '%' && c.col() === 0) throw c.error('YAML directives (%YAML, %TAG) are not supported')
    if (c.atDocumentMarker('---')) {
      c.pos += 3
      c.expectLineEnd('"---" (start the content on the next line)')
    }
    const value = this.#node(-1, 'doc')
    c.skipToContent()
    if (c.atDocumentMarker('...')) {
      c.pos += 3
      c.expectLineEnd('"..."')
      c.skipToContent()
    }
    if (c.atDocumentMarker()) throw c.error('multiple YAML documents are not supported')
    if (!c.eof) throw c.error('unexpected content (check the indentation)')
    return value
  }

  /** A node that starts at or after the cursor; content on a new line must be indented more than `parent`. */
  #node(parent: number, place: Place): unknown {
    const c = this.#c
    const crossed = c.skipToContent()
    if (c.eof || c.atDocumentMarker()) return null
    const inline = !crossed && place !== 'doc'
    if (!inline && c.col() <= parent) {
      if (place === 'value' && c.col() === parent && c.atSequenceEntry()) return this.#sequence(parent, true)
      return null
    }
    return this.#s.nested(() => this.#content(parent, place, inline, false))
  }

  /** The node at the cursor (which is on content). `inline`: on the same line as its key or `-`. */
  #content(parent: number, place: Place, inline: boolean, anchored: boolean): unknown {
    const c = this.#c
    const ch = c.ch
    const start = c.pos
    if (ch === '&') {
      if (anchored) throw c.error('a node may have only one anchor')
      return this.#s.anchor(() =>
        c.atLineEnd() ? this.#node(parent, place) : this.#content(parent, place, inline, true),
      )
    }
    if (ch === '*') {
      if (anchored) throw c.error('an alias cannot have an anchor')
      const value = this.#s.alias()
      c.skipBlanks()
      if (c.atValueIndicator()) throw c.error('an alias cannot be a mapping key', start)
      c.expectLineEnd()
      return value
    }
    if (ch === '!') throw c.error('YAML tags (!tag) are not supported')
    if (ch === '|' || ch === '>') return readBlockScalar(c, parent)
    if (ch === '[' || ch === '{') {
      const value = readFlow(this.#s, parent)
      c.skipBlanks()
      if (c.ch === ':')
        throw c.error('complex mapping keys (a flow collection as a key) are not supported', start)
      c.expectLineEnd()
      return value
    }
    if ((ch === '?' || ch === ':') && isBlankOrEnd(c.at(1))) {
      throw c.error(
        ch === '?' ? 'complex mapping keys ("? ") are not supported' : 'a mapping key is missing before ":"',
      )
    }
    if (c.atSequenceEntry()) {
      if (inline && place === 'value')
        throw c.error('a block sequence cannot start on the same line as its key')
      return this.#sequence(c.col(), false)
    }
    const quoted = ch === '"' || ch === "'"
    let text: string
    let multiLine: boolean
    let key: boolean
    if (quoted) {
      ;({ value: text, multiLine } = readQuoted(c, parent))
      c.skipBlanks()
      key = c.atValueIndicator()
    } else ({ text, multiLine, key } = readPlain(c, parent, false))
    if (!key) {
      c.expectLineEnd()
      return quoted ? text : resolvePlain(text)
    }
    if (multiLine) throw c.error('a mapping key must fit on one line', start)
    if (anchored) throw c.error('anchors on mapping keys are not supported', start)
    if (inline && place === 'value') {
      throw c.error(
        'a mapping cannot start on the same line as its key; move it to the next line, indented',
        start,
      )
    }
    return this.#mapping(c.col(start), quoted ? text : this.#s.keyString(resolvePlain(text), start), start)
  }

  /** A block mapping at column `indent`; the cursor is on the `:` after its first key. */
  #mapping(indent: number, firstKey: string, firstKeyPos: number): Record<string, unknown> {
    const c = this.#c
    const map: Record<string, unknown> = {}
    const lines = new Map<string, number>()
    let key = firstKey
    let keyPos = firstKeyPos
    for (;;) {
      c.pos++
      this.#s.set(map, lines, key, this.#node(indent, 'value'), keyPos)
      c.skipToContent()
      if (c.eof || c.atDocumentMarker() || c.col() < indent) return map
      if (c.col() > indent) {
        throw c.error(
          `bad indentation: expected a mapping key at column ${indent + 1}, found column ${c.col() + 1}`,
        )
      }
      keyPos = c.pos
      key = this.#key()
    }
  }

  /** Reads the key of a block mapping entry and leaves the cursor on its `:`. */
  #key(): string {
    const c = this.#c
    const start = c.pos
    if (c.atSequenceEntry()) throw c.error('expected a mapping key, found a sequence entry ("- ")')
    this.#s.refuseKeyStart()
    if (c.ch === '"' || c.ch === "'") {
      const { value, multiLine } = readQuoted(c, -1)
      c.skipBlanks()
      if (multiLine || !c.atValueIndicator()) throw c.error('expected ":" after the mapping key', start)
      return value
    }
    const { text, key } = readPlain(c, c.col(), false)
    if (!key) throw c.error('expected a mapping key ("key: value") but found no ":" on this line', start)
    return this.#s.keyString(resolvePlain(text), start)
  }

  /** A block sequence at column `indent` (the cursor is on its first `-`). */
  #sequence(indent: number, indentless: boolean): unknown[] {
    const c = this.#c
    const list: unknown[] = []
    for (;;) {
      c.pos++
      list.push(this.#node(indent, 'entry'))
      c.skipToContent()
      if (c.eof || c.atDocumentMarker() || c.col() < indent) return list
      if (c.col() > indent) {
        throw c.error(
          `bad indentation: expected a sequence entry at column ${indent + 1}, found column ${c.col() + 1}`,
        )
      }
      if (!c.atSequenceEntry()) {
        if (indentless) return list
        throw c.error('expected a sequence entry ("- ") at this indentation')
      }
    }
  }
}
