import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { parseYaml } from '../../src/config/yaml/yaml.ts'
import { YamlGenerator } from './yaml-generator.ts'

const FIXTURES = path.join(import.meta.dirname, 'fixtures')
/** The real-world corpus (fixtures/corpus/INDEX.md names each file's source); compared in its own test. */
const CORPUS = path.join(FIXTURES, 'corpus')

/**
 * What `parseYaml` refuses on purpose although the `yaml` package accepts it. Anything else
 * one parser accepts, the other must accept with a deep-equal result.
 */
const DELIBERATE_REFUSALS =
  /appears twice with different values|tags \(!tag\)|merge keys|complex mapping keys|directives|recursive aliases/

/**
 * The reference parser, configured as client-go reads kubeconfigs: YAML 1.1 scalars
 * (`yes`, `017`) and a repeated key allowed (client-go keeps the last; `parseYaml`
 * accepts only equal repeats and refuses the rest, see DELIBERATE_REFUSALS).
 */
function reference(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: parse(text, { version: '1.1', uniqueKeys: false }) }
  } catch (err) {
    return { ok: false, error: (err as Error).message }
  }
}

function compare(text: string, label: string): void {
  const theirs = reference(text)
  let mine: unknown
  try {
    mine = parseYaml(text, { file: label })
  } catch (err) {
    const message = (err as Error).message
    assert.ok(
      !theirs.ok || DELIBERATE_REFUSALS.test(message),
      `${label}: refused but yaml accepts it: ${message}`,
    )
    return
  }
  assert.ok(theirs.ok, `${label}: accepted but yaml refuses it: ${theirs.ok ? '' : theirs.error}`)
  assert.deepStrictEqual(mine, theirs.value, label)
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(dir, f))
}

test('every fixture parses as the yaml package parses it (or is a deliberate refusal)', () => {
  const files = yamlFiles(FIXTURES).filter((f) => !f.startsWith(`${CORPUS}${path.sep}`))
  assert.ok(files.length >= 40, `found ${files.length} fixtures`)
  let parsed = 0
  for (const file of files) {
    compare(readFileSync(file, 'utf8'), path.relative(FIXTURES, file))
    parsed++
  }
  assert.equal(parsed, files.length)
})

test('every reference corpus file parses as the yaml package parses it', () => {
  const files = yamlFiles(CORPUS)
  assert.equal(files.length, 34)
  for (const file of files) compare(readFileSync(file, 'utf8'), path.basename(file))
})

test('hand-picked edge cases agree with the yaml package', () => {
  const cases = [
    'a: |\n  x\n  y\n',
    'a: |-\n  x\n\n',
    'a: |+\n  x\n\n\nb: 1',
    'a: >\n  x\n  y\n\n  z\n   w\n  v\n',
    'a: |2\n    x\n  y\n',
    'a: >-\n\n  x\n',
    'a: |+\n\n\nb: c',
    '- |1\n  x\n',
    '|\n x\n',
    'a: >2\n    x\n   y\n',
    'a: |\n  x\n    \n  y\n',
    'a: "x\\ty\\u00e9\\x41\\U0001F600\\"\\\\ \\/"',
    'a: "a\n  b\n\n  c  \n  d"',
    "a: 'it''s\n  folded'",
    'a: "line\\\n   next"',
    'a: {x: 1, "y": [a, b], z: }',
    'a: [\n  a,\n  b,\n]\n',
    'a: {a, b: c}',
    'a: [a b\n  c, d]',
    'a: one\n  two\n\n  three\n',
    'a:\n- b\n  - c',
    'x: &a 1\ny: *a\n',
    'a: yes\nb: off\nc: 017\nd: 0x1f\ne: 1.5\nf: .inf\ng: ~\nh: null\ni: "yes"\nj: 1e3\nk: .NaN\nl: -.inf',
    'y: n\nOn: Off\n',
    '__proto__: {x: 1}\n',
    'a:\n  b: 1\n\t\n  c: 2',
    'a: b\t# c',
    'k:    \n  v',
    '- \n  a: 1',
  ]
  for (const text of cases) compare(text, JSON.stringify(text))
})

test('property: 600 generated kubeconfig-shaped documents parse exactly as the yaml package parses them', () => {
  const generator = new YamlGenerator(20240611)
  for (let i = 0; i < 600; i++) {
    const text = generator.document()
    const theirs = reference(text)
    assert.ok(theirs.ok, `generated document ${i} is not valid YAML:\n${text}`)
    assert.deepStrictEqual(
      parseYaml(text, { file: `generated-${i}` }),
      theirs.value,
      `generated document ${i}:\n${text}`,
    )
  }
})
