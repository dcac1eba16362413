/**
 * @module yaml/state — what the YAML reader tracks across one document: anchors, alias and depth limits, mapping keys.
 */
import { nodeUtil } from '../../core/node-builtins.ts'
import { quoteInput } from '../../core/quote-input.ts'
import { isBlankOrEnd, type YamlCursor } from './cursor.ts'

/** At most this many aliases per document: kubeconfigs need none; this bounds alias-expansion ("billion laughs") cost. Same figure as the `yaml` package's `maxAliasCount`. */
export const MAX_YAML_ALIASES = 100
/**
 * Most nodes aliases may add to one document: 100,000, each use of an alias counting every node of
 * what it names. Billion-laughs input stays under {@link MAX_YAML_ALIASES} aliases yet expands to
 * 387 million nodes from 500 bytes (and an 840-byte kubeconfig cost 22 s of duplicate-key checks, a
 * 1.2 KB one over 120 s of serialising its exec extension). Kubeconfigs that use anchors reuse an
 * entry or an exec block (tens of nodes) a few times; 100,000 nodes are walked in milliseconds.
 * go-yaml, client-go's parser, refuses "excessive aliasing" by a ratio of aliases to decoded nodes.
 */
export const MAX_YAML_ALIAS_NODES = 100_000
/** Deepest nesting accepted: a kubeconfig nests about 6 levels; this keeps hostile input from exhausting the stack. */
export const MAX_YAML_DEPTH = 64

/** Why a mapping key cannot start with a character, by that character. */
const KEY_REFUSALS: Record<string, string> = {
  '[': 'expected a mapping key ("key: value"); a flow collection cannot be a key',
  '{': 'expected a mapping key ("key: value"); a flow collection cannot be a key',
  '?': 'complex mapping keys ("? ") are not supported',
  '&': 'anchors on mapping keys are not supported',
  '*': 'an alias cannot be a mapping key',
  '!': 'YAML tags (!tag) are not supported',
  '|': 'expected a mapping key ("key: value"), found a block scalar indicator',
  '>': 'expected a mapping key ("key: value"), found a block scalar indicator',
}

const PENDING: unique symbol = Symbol('pending anchor')

/** Per-document state shared by the block and flow readers. */
export class YamlState {
  readonly cursor: YamlCursor
  readonly #anchors = new Map<string, unknown>()
  /** Nodes of each collection an alias named or that holds one, counted once (a DAG, walked as one). */
  readonly #sizes = new WeakMap<object, number>()
  #aliases = 0
  #aliasNodes = 0
  #depth = 0

  constructor(cursor: YamlCursor) {
    this.cursor = cursor
  }

  /** Reads one nested node with `read`, refusing nesting deeper than {@link MAX_YAML_DEPTH}. */
  nested<T>(read: () => T): T {
    if (++this.#depth > MAX_YAML_DEPTH)
      throw this.cursor.error(`nesting deeper than ${MAX_YAML_DEPTH} levels`)
    const value = read()
    this.#depth--
    return value
  }

  /** At `&name`: reads the name, then the node with `read`, and records it under the name. */
  anchor<T>(read: () => T): T {
    const name = this.#name()
    this.#anchors.set(name, PENDING)
    const value = read()
    this.#anchors.set(name, value)
    return value
  }

  /** At `*name`: the value of the anchor, counted against {@link MAX_YAML_ALIASES}. */
  alias(): unknown {
    const c = this.cursor
    const start = c.pos
    const name = this.#name()
    if (!this.#anchors.has(name))
      throw c.error(`alias ${quoteInput(`*${name}`)} refers to no anchor defined before it`, start)
    const value = this.#anchors.get(name)
    if (value === PENDING) {
      throw c.error(
        `alias ${quoteInput(`*${name}`)} is inside the node it refers to (recursive aliases are not supported)`,
        start,
      )
    }
    if (++this.#aliases > MAX_YAML_ALIASES)
      throw c.error(`more than ${MAX_YAML_ALIASES} aliases in one document`, start)
    this.#aliasNodes += this.#size(value)
    if (this.#aliasNodes > MAX_YAML_ALIAS_NODES) {
      throw c.error(
        `aliases expand to more than ${MAX_YAML_ALIAS_NODES} nodes (edgeop's limit for one document; exponentially nested aliases?)`,
        start,
      )
    }
    return value
  }

  /** Nodes in `value` as the expanded tree has them; each distinct collection is walked once. */
  #size(value: unknown): number {
    if (typeof value !== 'object' || value === null) return 1
    let size = this.#sizes.get(value)
    if (size === undefined) {
      size = 1
      for (const v of Object.values(value)) size += this.#size(v)
      this.#sizes.set(value, size)
    }
    return size
  }

  #name(): string {
    const c = this.cursor
    const start = ++c.pos
    while (!isBlankOrEnd(c.ch) && !',[]{}'.includes(c.ch)) c.pos++
    if (c.pos === start) throw c.error('an anchor or alias needs a name', start - 1)
    return c.src.slice(start, c.pos)
  }

  /** Throws when the character at the cursor cannot start a mapping key. */
  refuseKeyStart(): void {
    const c = this.cursor
    const refused = KEY_REFUSALS[c.ch]
    if (refused && (c.ch !== '?' || isBlankOrEnd(c.at(1)))) throw c.error(refused)
  }

  /** The string form of a resolved plain key, as `sigs.k8s.io/yaml` converts keys for JSON. */
  keyString(key: unknown, pos: number): string {
    if (key === null) throw this.cursor.error('a mapping key cannot be empty or null', pos)
    return String(key)
  }

  /**
   * Adds `key` to `map` as an own property (so `__proto__` is plain data). An equal repeat
   * is accepted; a different one is an error naming both lines. `lines` maps keys to lines.
   * The comparison walks at most the repeated value's nodes, which are in the text or among the
   * {@link MAX_YAML_ALIAS_NODES} that aliases may add: linear in the input (an 840-byte document
   * of two equal alias trees cost 22 s before that cap).
   */
  set(
    map: Record<string, unknown>,
    lines: Map<string, number>,
    key: string,
    value: unknown,
    pos: number,
  ): void {
    const c = this.cursor
    if (key === '<<') throw c.error('merge keys ("<<") are not supported', pos)
    const first = lines.get(key)
    if (first !== undefined) {
      if (nodeUtil().isDeepStrictEqual(map[key], value)) return
      const where = first === c.line(pos) ? `both on line ${first}` : `lines ${first} and ${c.line(pos)}`
      throw c.error(`key ${quoteInput(key)} appears twice with different values (${where})`, pos)
    }
    lines.set(key, c.line(pos))
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true })
  }
}
