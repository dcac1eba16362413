import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_YAML_ALIASES, MAX_YAML_DEPTH, parseYaml } from '../../src/config/yaml/yaml.ts'
import { isEdgeopError } from '../../src/core/errors.ts'

/** The message of the error `text` is refused with (file name `t.yaml`). */
function refusal(text: string): string {
  try {
    parseYaml(text, { file: 't.yaml' })
  } catch (err) {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_YAML'), `expected EDGEOP_ERR_YAML, got ${String(err)}`)
    return err.message
  }
  assert.fail(`accepted: ${JSON.stringify(text)}`)
}

test('block mappings and sequences, including sequences at the indentation of their key', () => {
  const doc = `
clusters:
- name: a
  cluster:
    server: https://a
- name: b
contexts:
  - name: c
    context: {}
empty:
`
  assert.deepEqual(parseYaml(doc), {
    clusters: [{ name: 'a', cluster: { server: 'https://a' } }, { name: 'b' }],
    contexts: [{ name: 'c', context: {} }],
    empty: null,
  })
  assert.deepEqual(parseYaml('- - a\n  - b\n- c: d\n  e: f\n-\n'), [['a', 'b'], { c: 'd', e: 'f' }, null])
})

test('scalars resolve as client-go (go-yaml v2, YAML 1.1) sees them', () => {
  const doc = `
a: true
b: False
c: yes
d: off
e: ~
f: null
g:
h: 42
i: -7
j: 017
k: 0x1F
l: 1.5
m: .inf
nn: "yes"
o: '42'
p: 1_000
q: 2024-01-02
r: v1.2.3
s: 0b101
`
  assert.deepEqual(parseYaml(doc), {
    a: true,
    b: false,
    c: true,
    d: false,
    e: null,
    f: null,
    g: null,
    h: 42,
    i: -7,
    j: 15,
    k: 31,
    l: 1.5,
    m: Number.POSITIVE_INFINITY,
    nn: 'yes',
    o: '42',
    p: '1_000',
    q: '2024-01-02',
    r: 'v1.2.3',
    s: '0b101',
  })
  assert.deepEqual(
    parseYaml('yes: 1\nn: 0\n12: 2\n'),
    { true: 1, false: 0, '12': 2 },
    'keys become strings as sigs.k8s.io/yaml makes them',
  )
})

test('double-quoted escapes, single-quoted doubling and quoted folding', () => {
  assert.deepEqual(parseYaml(String.raw`a: "back\\slash \"q\" \t\n \u00e9\x41\U0001F600 \/ \0"`), {
    a: 'back\\slash "q" \t\n éA😀 / \0',
  })
  assert.deepEqual(parseYaml("a: 'it''s'\nb: 'x\n  y\n\n  z'\nc: \"one \\\n   two\"\n"), {
    a: "it's",
    b: 'x y\nz',
    c: 'one two',
  })
  assert.deepEqual(parseYaml('a: "  keep leading"\nb: "trim   \n  folded"'), {
    a: '  keep leading',
    b: 'trim folded',
  })
})

test('literal and folded block scalars with chomping and indentation indicators', () => {
  assert.deepEqual(parseYaml('a: |\n  x\n   y\n\n  z\nb: 1\n'), { a: 'x\n y\n\nz\n', b: 1 })
  assert.deepEqual(parseYaml('a: |-\n  x\n\n'), { a: 'x' })
  assert.deepEqual(parseYaml('a: |+\n  x\n\n\nb: 1'), { a: 'x\n\n\n', b: 1 })
  assert.deepEqual(parseYaml('a: >\n  one\n  two\n\n  three\n    indented\n  four\n'), {
    a: 'one two\nthree\n  indented\nfour\n',
  })
  assert.deepEqual(parseYaml('a: >-\n  folded\n  token\n'), { a: 'folded token' })
  assert.deepEqual(parseYaml('a: |2\n    two extra\n  base\n'), { a: '  two extra\nbase\n' })
  assert.deepEqual(parseYaml('a: |\nb: c\n'), { a: '', b: 'c' })
  assert.deepEqual(parseYaml('- |\n  in a list\n- >+\n  kept\n\n'), ['in a list\n', 'kept\n\n'])
  // At the very end of a file without a final line break, libyaml (hence go-yaml and
  // client-go) and the YAML spec give no trailing newline; the `yaml` package adds one.
  assert.deepEqual(parseYaml('token: |\n  abc'), { token: 'abc' })
})

test('multi-line plain scalars fold with single spaces (gcloud installHint)', () => {
  const doc =
    'installHint: Install the plugin by\n  following https://example.org/docs#install\n\n  (twice)\nnext: 1\n'
  assert.deepEqual(parseYaml(doc), {
    installHint: 'Install the plugin by following https://example.org/docs#install\n(twice)',
    next: 1,
  })
  assert.deepEqual(parseYaml('- first\n  second # comment\n- third'), ['first second', 'third'])
})

test('flow collections, comments, document markers, CRLF and a BOM', () => {
  assert.deepEqual(parseYaml('a: [x, "y", [z], {k: v}, {}, []]  # c\nb: {m: 1, nn: , o, "p": [q,]}'), {
    a: ['x', 'y', ['z'], { k: 'v' }, {}, []],
    b: { m: 1, nn: null, o: null, p: ['q'] },
  })
  assert.deepEqual(parseYaml('args: [\n  one,\n  two,\n]\n'), { args: ['one', 'two'] })
  assert.deepEqual(parseYaml('# lead\n---\n# after\na: 1 # c\n...\n# trailing\n'), { a: 1 })
  assert.deepEqual(parseYaml('\uFEFFa: 1\r\nb:\r\n- x\r\n'), { a: 1, b: ['x'] })
  assert.equal(parseYaml(''), null)
  assert.equal(parseYaml('# nothing\n---\n'), null)
  assert.deepEqual(parseYaml('url: http://x/#frag\nk:\tv\n'), { url: 'http://x/#frag', k: 'v' })
})

test('anchors and aliases resolve to the anchored value', () => {
  const doc = parseYaml('a: &u\n  token: t\nb: *u\nc: &s plain\nd: [*s, &f {x: 1}, *f]\n') as Record<
    string,
    unknown
  >
  assert.deepEqual(doc, {
    a: { token: 't' },
    b: { token: 't' },
    c: 'plain',
    d: ['plain', { x: 1 }, { x: 1 }],
  })
  assert.equal(refusal('a: *missing'), 't.yaml:1:4: alias "*missing" refers to no anchor defined before it')
  assert.equal(
    refusal('a: &r\n  b: *r\n'),
    't.yaml:2:6: alias "*r" is inside the node it refers to (recursive aliases are not supported)',
  )
  const many = `a: &a 1\nb: [${Array.from({ length: MAX_YAML_ALIASES + 1 }, () => '*a').join(', ')}]\n`
  assert.match(refusal(many), /more than 100 aliases in one document$/)
})

test('duplicate keys: an equal repeat is accepted, a different one names both lines', () => {
  assert.deepEqual(parseYaml('kind: Config\napiVersion: v1\nkind: Config\n'), {
    kind: 'Config',
    apiVersion: 'v1',
  })
  assert.deepEqual(parseYaml('a: {x: [1]}\na: {x: [1]}\n'), { a: { x: [1] } })
  assert.equal(
    refusal('current-context: a\nother: 1\ncurrent-context: b\n'),
    't.yaml:3:1: key "current-context" appears twice with different values (lines 1 and 3)',
  )
  assert.equal(
    refusal('a: {k: 1, k: 2}'),
    't.yaml:1:11: key "k" appears twice with different values (both on line 1)',
  )
})

test('a __proto__ key is an own property and changes no prototype', () => {
  const doc = parseYaml(
    '__proto__:\n  polluted: yes\nlist:\n- __proto__: {polluted: 1}\nflow: {__proto__: [1]}\n',
  ) as Record<string, unknown>
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
  assert.equal(Object.getPrototypeOf(doc), Object.prototype)
  assert.ok(Object.hasOwn(doc, '__proto__'))
  assert.deepEqual(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value, { polluted: true })
  const item = (doc.list as Record<string, unknown>[])[0] as Record<string, unknown>
  assert.equal(Object.getPrototypeOf(item), Object.prototype)
  assert.equal(item.polluted, undefined)
  const flow = doc.flow as Record<string, unknown>
  assert.equal(Object.getPrototypeOf(flow), Object.prototype)
  assert.deepEqual(Object.getOwnPropertyDescriptor(flow, '__proto__')?.value, [1])
  assert.deepEqual(Object.keys(doc), ['__proto__', 'list', 'flow'])
})

test('refusals name file:line:column and what is wrong', () => {
  const cases: [string, string][] = [
    ['a:\n\tb: 1\n', 't.yaml:2:1: tab character used for indentation (YAML allows only spaces)'],
    [
      'a:\n  b: 1\n c: 2\n',
      't.yaml:3:2: bad indentation: expected a mapping key at column 1, found column 2',
    ],
    [
      'l:\n  - a: 1\n   - b\n',
      't.yaml:3:4: bad indentation: expected a sequence entry at column 3, found column 4',
    ],
    ['l:\n  - a\n  b: c\n', 't.yaml:3:3: expected a sequence entry ("- ") at this indentation'],
    ['a: 1\njust words\n', 't.yaml:2:1: expected a mapping key ("key: value") but found no ":" on this line'],
    ['a: 1\n- b\n', 't.yaml:2:1: expected a mapping key, found a sequence entry ("- ")'],
    ['a: 1\n---\nb: 2\n', 't.yaml:2:1: multiple YAML documents are not supported'],
    ['a: 1\n...\nb: 2\n', 't.yaml:3:1: unexpected content (check the indentation)'],
    ['%YAML 1.1\n---\na: 1\n', 't.yaml:1:1: YAML directives (%YAML, %TAG) are not supported'],
    ['a: !!str 1\n', 't.yaml:1:4: YAML tags (!tag) are not supported'],
    ['base: &b {x: 1}\nc:\n  <<: *b\n', 't.yaml:3:3: merge keys ("<<") are not supported'],
    ['? a\n: b\n', 't.yaml:1:1: complex mapping keys ("? ") are not supported'],
    ['[a]: b\n', 't.yaml:1:1: complex mapping keys (a flow collection as a key) are not supported'],
    ['a:\n  [x]: y\n', 't.yaml:2:3: complex mapping keys (a flow collection as a key) are not supported'],
    [
      'a: b: c\n',
      't.yaml:1:4: a mapping cannot start on the same line as its key; move it to the next line, indented',
    ],
    ['a: - b\n', 't.yaml:1:4: a block sequence cannot start on the same line as its key'],
    [
      'a: x\n  y: z\n',
      't.yaml:2:3: unexpected mapping key: this line continues the value above it (check the indentation)',
    ],
    [
      'a: "open\nb: 1\n',
      't.yaml:1:4: a quoted string continues on a line that is not indented enough (is a closing quote missing?)',
    ],
    ['a: "open', 't.yaml:1:4: unterminated double-quoted string'],
    ['a: "\\q"', 't.yaml:1:5: invalid escape sequence in a double-quoted string'],
    ['a: "x" y\n', 't.yaml:1:8: unexpected content after the value'],
    [
      'a: [x, y\nb: 1\n',
      't.yaml:1:4: a flow collection continues on a line that is not indented enough (is a closing bracket missing?)',
    ],
    ['a: [x, y', 't.yaml:1:4: unterminated flow collection'],
    ['a: [x: y]', 't.yaml:1:6: "key: value" pairs inside a flow sequence are not supported'],
    ['a: @x', 't.yaml:1:4: a plain value cannot start with "@"; quote the value'],
    [
      'a: |\n   \n  x\n',
      't.yaml:3:1: a leading empty line of a block scalar has more spaces than its first line',
    ],
    ['~: 1\n', 't.yaml:1:1: a mapping key cannot be empty or null'],
    ['- &a &b x\n', 't.yaml:1:6: a node may have only one anchor'],
    ['- &a k: v\n', 't.yaml:1:6: anchors on mapping keys are not supported'],
  ]
  for (const [text, message] of cases) assert.equal(refusal(text), message, JSON.stringify(text))
})

test('nesting is bounded so hostile input cannot exhaust the stack', () => {
  const deep = `${'['.repeat(MAX_YAML_DEPTH + 1)}${']'.repeat(MAX_YAML_DEPTH + 1)}`
  assert.match(refusal(deep), /nesting deeper than 64 levels$/)
  assert.doesNotThrow(() => parseYaml(`${'['.repeat(20)}${']'.repeat(20)}`))
})

test('error messages quote no document text', () => {
  const secret = 'sk-9f8e7d6c5b4a'
  for (const text of [
    `token: "${secret}\nnext: 1\n`,
    `token: ${secret}\n  extra: x\n`,
    `token: ${secret}\ntoken: other\n`,
    `[${secret}\n`,
    `a: 1\n${secret} tail\n`,
    `token: "${secret}\\q"\n`,
    `token: !tag ${secret}\n`,
  ]) {
    const message = refusal(text)
    assert.ok(!message.includes(secret), message)
  }
})
