import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse as yamlParse } from 'yaml'
import { toYaml } from '../../src/config/yaml/emit.ts'
import { parseYaml } from '../../src/config/yaml/yaml.ts'

const tricky = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'x' }, annotations: {} },
      data: {
        yes: 'yes',
        no: 'no',
        n: '007',
        f: '1.5',
        e: '1e3',
        h: '0x1f',
        t: 'true',
        nul: 'null',
        tilde: '~',
        empty: '',
      },
    },
    {
      spec: {
        list: [],
        nested: [[1, 2], { a: null }],
        colon: 'a: b',
        hash: 'a #b',
        lead: ' x',
        star: '*ref',
        pct: '%x',
        quote: '"q"',
        nl: 'line1\nline2',
        unicode: 'façade 日本',
        num: 8080,
        neg: -1,
        float: 0.5,
        bool: false,
      },
    },
  ],
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
}

test('toYaml output parses back to the input with our parser and with the yaml package (1.1 and 1.2)', () => {
  const text = toYaml(tricky)
  assert.deepEqual(parseYaml(text, { file: 'emitted.yaml' }), tricky)
  assert.deepEqual(yamlParse(text), tricky)
  assert.deepEqual(yamlParse(text, { version: '1.1' }), tricky)
})

test('toYaml writes kubectl-like block style', () => {
  assert.equal(
    toYaml({ a: { b: [{ c: 1, d: 'x' }, 'z'], e: {} } }),
    'a:\n  b:\n  - c: 1\n    d: x\n  - z\n  e: {}\n',
  )
})
