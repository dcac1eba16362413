/**
 * @module yaml-generator — seeded random kubeconfig-shaped YAML documents in the subset `parseYaml` supports.
 *
 * Used by the differential test: every document it writes must parse to the same value
 * with `parseYaml` and with the `yaml` package in YAML 1.1 mode. It therefore avoids the
 * forms where the two deliberately differ (timestamps, sexagesimal and `_` numbers, a
 * block scalar at the very end of a file without a line break) and never repeats a key.
 */
import { seededRandom } from '../support/random.ts'

const NUMBERS = ['0', '7', '-12', '+3', '017', '0x1f', '1.5', '.5', '3.0', '1e3', '6443']
const BOOLS = ['true', 'false', 'True', 'FALSE', 'yes', 'No', 'on', 'off', 'y', 'N']
const NULLS = ['~', 'null', 'Null', '']
const EXTRA_CHARS = [
  'é',
  '日本',
  '😀',
  '"',
  "'",
  '\\',
  '#',
  ': ',
  ' ',
  '\t',
  ',',
  '[',
  '}',
  '&',
  '*',
  '!',
  '|',
  '%',
]

/** Generates one document per call to {@link YamlGenerator.document}. */
export class YamlGenerator {
  readonly #rand: () => number
  #keys = 0
  #anchors = 0

  constructor(seed: number) {
    this.#rand = seededRandom(seed)
  }

  #int(n: number): number {
    return Math.floor(this.#rand() * n)
  }

  #chance(p: number): boolean {
    return this.#rand() < p
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.#int(items.length)] as T
  }

  /** A word that is a plain scalar everywhere (also inside flow collections) and resolves to a string. */
  #word(): string {
    const first = 'abcdfghijklmopqrstuvwxz'[this.#int(23)] as string // no n/y (booleans) nor e (`e-7` is a float to the yaml package)
    let w = first
    for (let i = this.#int(8); i > 0; i--) w += 'abcdefghijklmnopqrstuvwxyz0123456789-'[this.#int(37)]
    if (this.#chance(0.2)) w += this.#pick(['.example.org', '/path', ':6443', '@edge', '.v2'])
    return w
  }

  /** A unique plain key. */
  #key(): string {
    return `${this.#word()}-k${this.#keys++}`
  }

  /** Free text with any characters (for quoted and block scalars). */
  #text(): string {
    let s = this.#word()
    for (let i = this.#int(5); i > 0; i--)
      s += this.#chance(0.4) ? this.#pick(EXTRA_CHARS) : ` ${this.#word()}`
    return s
  }

  #doubleQuoted(): string {
    let s = this.#text()
    if (this.#chance(0.3)) s += '\n' + this.#text()
    const escaped = s.replace(
      /[\\"\n\t]/g,
      (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t' })[c] ?? c,
    )
    return `"${this.#chance(0.3) ? escaped.replace(/é/g, '\\u00e9') : escaped}"`
  }

  /** The text after `key: ` or `- ` for a scalar; may span lines indented at `indent`. */
  #scalar(indent: number, flow = false): string {
    const pad = ' '.repeat(indent)
    switch (flow ? this.#int(4) : this.#int(9)) {
      case 0:
        return this.#word()
      case 1:
        return `'${this.#text().replace(/'/g, "''").replace(/\t/g, ' ')}'`
      case 2:
        return this.#doubleQuoted()
      case 3:
        return this.#pick([...NUMBERS, ...BOOLS, ...NULLS.filter(Boolean)])
      case 4:
        return this.#chance(0.5) ? `${this.#word()} ${this.#word()}` : this.#pick(NULLS)
      case 5: {
        const lines = [
          this.#text(),
          ...Array.from({ length: this.#int(3) }, () => (this.#chance(0.2) ? '' : this.#text())),
        ]
        const body = lines.map((l) => (l ? `${pad}${l.replace(/^[ \t]+/, '')}` : '')).join('\n')
        return `${this.#pick(['|', '|-', '|+', '>', '>-', '>+'])}\n${body}`
      }
      case 6: {
        const more = Array.from(
          { length: 1 + this.#int(2) },
          () => `${this.#chance(0.2) ? '\n' : ''}\n${pad}${this.#word()}`,
        )
        return `${this.#word()} ${this.#word()}${more.join('')}`
      }
      case 7:
        return `[${Array.from({ length: this.#int(4) }, () => this.#scalar(indent, true)).join(', ')}]`
      default:
        return `{${Array.from({ length: this.#int(3) }, () => `${this.#key()}: ${this.#scalar(indent, true)}`).join(', ')}}`
    }
  }

  #comment(indent: number): string[] {
    return this.#chance(0.15)
      ? [`${' '.repeat(this.#int(indent + 1))}# ${this.#text().replace(/\n/g, ' ')}`]
      : []
  }

  /** Lines of a mapping at `indent`; `firstPrefix` replaces the indentation of the first line (`- ` entries). */
  #mapping(indent: number, fields: [string, () => string[] | string][], firstPrefix?: string): string[] {
    const out: string[] = []
    const order = [...fields].sort(() => this.#rand() - 0.5)
    order.forEach(([key, value], i) => {
      const prefix = i === 0 && firstPrefix !== undefined ? firstPrefix : ' '.repeat(indent)
      if (i > 0 || firstPrefix === undefined) out.push(...this.#comment(indent))
      let v = value()
      if (typeof v === 'string' && this.#anchors > 0 && this.#chance(0.05))
        v = `*a${this.#int(this.#anchors)}`
      else if (typeof v === 'string' && this.#chance(0.05)) v = `&a${this.#anchors++} ${v}`
      if (typeof v === 'string') {
        const trailing =
          !v.startsWith('|') && !v.startsWith('>') && !v.includes('\n') && this.#chance(0.2) ? ' # note' : ''
        out.push(`${prefix}${key}: ${v}${trailing}`)
      } else out.push(`${prefix}${key}:${this.#chance(0.1) ? ' # nested' : ''}`, ...v)
      if (this.#chance(0.1)) out.push('')
    })
    return out
  }

  /** A value for a nested field at `indent`: a scalar, or lines of a mapping or list below it. */
  #value(indent: number, depth: number): () => string[] | string {
    return () => {
      if (depth > 3 || this.#chance(0.6)) return this.#scalar(indent + 2)
      const inner = indent + (this.#chance(0.8) ? 2 : 4)
      if (this.#chance(0.5)) {
        const n = 1 + this.#int(3)
        return this.#mapping(
          inner,
          Array.from({ length: n }, () => [this.#key(), this.#value(inner, depth + 1)]),
        )
      }
      return this.#list(this.#chance(0.5) ? indent : inner, depth + 1, () => this.#scalar(inner + 2))
    }
  }

  /** Lines of a block sequence at `indent` whose entries are scalars or mappings. */
  #list(indent: number, depth: number, scalar: () => string): string[] {
    const out: string[] = []
    const pad = ' '.repeat(indent)
    for (let i = 1 + this.#int(3); i > 0; i--) {
      if (this.#chance(0.5)) out.push(`${pad}- ${scalar()}`)
      else
        out.push(
          ...this.#mapping(
            indent + 2,
            [
              [this.#key(), this.#value(indent + 2, depth)],
              [this.#key(), this.#value(indent + 2, depth)],
            ],
            `${pad}- `,
          ),
        )
    }
    return out
  }

  /** A named kubeconfig list (`clusters`, `users`, `contexts`) at `indent`. */
  #named(indent: number, body: string, fields: string[]): string[] {
    const out: string[] = []
    const pad = ' '.repeat(indent)
    for (let i = 1 + this.#int(3); i > 0; i--) {
      const inner = indent + 4 + (this.#chance(0.2) ? 2 : 0)
      const bodyFields: [string, () => string[] | string][] = fields.map((f) => [
        f,
        () => this.#scalar(inner + 2),
      ])
      if (this.#chance(0.3))
        bodyFields.push(['extensions', () => this.#list(inner, 2, () => this.#scalar(inner + 4))])
      out.push(
        ...this.#mapping(
          indent + 2,
          [
            ['name', () => this.#scalar(indent + 4)],
            [body, () => (this.#chance(0.1) ? '{}' : this.#mapping(inner, bodyFields))],
          ],
          `${pad}- `,
        ),
      )
    }
    return out
  }

  /** A complete document. */
  document(): string {
    this.#keys = 0
    this.#anchors = 0
    const seqIndent = (): number => (this.#chance(0.5) ? 0 : 2)
    const top: [string, () => string[] | string][] = [
      ['apiVersion', () => 'v1'],
      ['kind', () => this.#pick(['Config', '"Config"'])],
      ['current-context', () => this.#scalar(2)],
      ['preferences', () => '{}'],
      [
        'clusters',
        () =>
          this.#named(seqIndent(), 'cluster', [
            'server',
            'certificate-authority-data',
            'insecure-skip-tls-verify',
            'proxy-url',
          ]),
      ],
      ['users', () => this.#named(seqIndent(), 'user', ['token', 'client-key-data', 'username', 'password'])],
      ['contexts', () => this.#named(seqIndent(), 'context', ['cluster', 'user', 'namespace'])],
      [this.#key(), this.#value(0, 0)],
    ]
    const lines = [...(this.#chance(0.3) ? ['# generated', '---'] : []), ...this.#mapping(0, top)]
    if (this.#chance(0.2)) lines.push('...')
    if (this.#chance(0.1)) lines.push('# end')
    return `${lines.join('\n')}\n`
  }
}
